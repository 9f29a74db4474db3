# A static (CGO_ENABLED=0) Go binary alone in an empty image. The build
# context is made in Go by bench/containers: this file plus the binary,
# named {{.Binary}}. No EXPOSE: the bench reaches containers by their IP on
# the run's bridge network, and published ports would add docker-proxy.
FROM scratch
COPY {{.Binary}} /{{.Binary}}
USER 65534:65534
ENTRYPOINT ["/{{.Binary}}"]
