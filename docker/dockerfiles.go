// Package docker holds the Dockerfiles of the project's images. They are
// embedded so that bench/backend/containers/engine builds every image from Go, with a
// build context it assembles itself, wherever the process runs.
package docker

import _ "embed"

// StaticGo is the Dockerfile for a static Go binary in a scratch image.
// It is a text/template: {{.Binary}} names the binary in the context.
//
//go:embed static-go.Dockerfile
var StaticGo string

// HostRedis is the Dockerfile for the host's redis-server and its shared
// libraries in a scratch image; the context holds them under rootfs/.
//
//go:embed host-redis.Dockerfile
var HostRedis string

// Monolock is the Dockerfile of the monolock server image users run: the
// bench's monolock image (build argument BASE) with its ports and
// environment declared.
//
//go:embed monolock.Dockerfile
var Monolock string
