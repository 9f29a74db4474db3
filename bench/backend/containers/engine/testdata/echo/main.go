// Command echo is a tiny TCP echo server on :8080, built into an image by
// the bench/backend/containers/engine tests to exercise BuildGoImage without depending
// on the project's real servers.
package main

import (
	"io"
	"log"
	"net"
)

func main() {
	l, err := net.Listen("tcp", ":8080")
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			defer c.Close()
			_, _ = io.Copy(c, c)
		}()
	}
}
