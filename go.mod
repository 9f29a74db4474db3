module github.com/monolock/monolock-bench

go 1.26.8
