package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSelfName(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(bin, "flotilla")
	other := filepath.Join(dir, "other-flotilla")
	for _, f := range []string{exe, other} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	found := func(path string) func(string) (string, error) {
		return func(string) (string, error) { return path, nil }
	}
	notFound := func(string) (string, error) { return "", errors.New("not found") }
	tests := []struct {
		name     string
		arg0     string
		exe      string
		lookPath func(string) (string, error)
		want     string
	}{
		{"on PATH", "flotilla", exe, found(exe), "flotilla"},
		{"started by a relative path, another flotilla on PATH", "bin/flotilla", exe, found(other), "bin/flotilla"},
		{"started by a relative path, none on PATH", "bin/flotilla", exe, notFound, "bin/flotilla"},
		{"started by an absolute path", exe, exe, notFound, exe},
		{"started through PATH lookup elsewhere", "flotilla", exe, notFound, exe},
		{"a test binary", "/tmp/go-build1/dev.test", "/tmp/go-build1/dev.test", notFound, "flotilla"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := selfName(tt.arg0, tt.exe, tt.lookPath); got != tt.want {
				t.Errorf("selfName(%q, %q) = %q, want %q", tt.arg0, tt.exe, got, tt.want)
			}
		})
	}
}
