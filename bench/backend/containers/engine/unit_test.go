package engine

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

func TestParseLdd(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []string
		wantErr bool
	}{
		{
			name: "debian redis-server",
			out: "\tlinux-vdso.so.1 (0x00007ffd3b5f2000)\n" +
				"\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f3c1a000000)\n" +
				"\tlibssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x00007f3c19f00000)\n" +
				"\t/lib64/ld-linux-x86-64.so.2 (0x00007f3c1a300000)\n",
			want: []string{"/lib/x86_64-linux-gnu/libm.so.6", "/lib/x86_64-linux-gnu/libssl.so.3", "/lib64/ld-linux-x86-64.so.2"},
		},
		{
			name:    "missing library",
			out:     "\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x1)\n\tlibfoo.so.1 => not found\n",
			wantErr: true,
		},
		{
			name:    "static binary",
			out:     "\tstatically linked\n",
			wantErr: true,
		},
		{
			name:    "empty",
			out:     "",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLdd(tt.out)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseLdd error = %v, want error %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("parseLdd = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		out, want string
		wantErr   bool
	}{
		{out: "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=ae4d7c971a948f0\n", want: "7.0.15"},
		{out: "Redis server v=8.2.1 sha=1:1 malloc=libc bits=64\n", want: "8.2.1"},
		{out: "cat (GNU coreutils) 9.1\n", want: "9.1"},
		{out: "server: command not found", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseVersion(tt.out)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseVersion(%q) = %q, %v; want %q, error %v", tt.out, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestContextArchiveIsDeterministicWithParents(t *testing.T) {
	a := []ContextFile{
		{Name: "Dockerfile", Mode: 0o644, Content: []byte("FROM scratch\n")},
		{Name: "rootfs/usr/bin/redis-server", Mode: 0o755, Content: []byte("bin")},
		{Name: "rootfs/lib64/ld.so", Mode: 0o755, Content: []byte("ld")},
	}
	b := []ContextFile{a[2], a[0], a[1]}
	ta, err := contextArchive(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := contextArchive(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ta, tb) {
		t.Fatal("the same files in another order gave a different archive (and image tag)")
	}

	var names []string
	tr := tar.NewReader(bytes.NewReader(ta))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
	}
	want := []string{"Dockerfile", "rootfs/", "rootfs/lib64/", "rootfs/lib64/ld.so", "rootfs/usr/", "rootfs/usr/bin/", "rootfs/usr/bin/redis-server"}
	if !slices.Equal(names, want) {
		t.Errorf("archive entries = %q, want %q", names, want)
	}
}

func TestPublishedHost(t *testing.T) {
	tests := []struct{ dockerHost, want string }{
		{"", "127.0.0.1"},
		{"unix:///var/run/docker.sock", "127.0.0.1"},
		{"tcp://docker.example:2375", "docker.example"},
		{"tcp://[fd00::5]:2376", "fd00::5"},
	}
	for _, tt := range tests {
		t.Setenv("DOCKER_HOST", tt.dockerHost)
		if got := publishedHost(); got != tt.want {
			t.Errorf("DOCKER_HOST=%q: publishedHost() = %q, want %q", tt.dockerHost, got, tt.want)
		}
	}
}
