package ociimage

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

func testBuild(t *testing.T) (Build, Spec) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "flotilla-agent")
	if err := os.WriteFile(bin, []byte("\x7fELF not really a binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := Build{Version: "v1.2.3", Revision: "abc123", Created: time.Unix(1700000000, 0).UTC(), Platform: v1.Platform{OS: "linux", Architecture: "amd64"}}
	return b, Spec{Name: "flotilla-agent", Binary: bin, Description: "agent"}
}

// TestImageReproducible builds one image twice, and once written and read
// back from an archive: one digest, one image ID.
func TestImageReproducible(t *testing.T) {
	b, s := testBuild(t)
	first, err := b.Image(s)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Image(s)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := first.Digest()
	d2, _ := second.Digest()
	if d1 != d2 {
		t.Fatalf("two builds of the same input: %s and %s", d1, d2)
	}
	file := filepath.Join(t.TempDir(), "agent.tar")
	tag := name.MustParseReference("ghcr.io/flotilla-io/flotilla-agent:v1.2.3").(name.Tag)
	if err := WriteArchive(file, tag, first); err != nil {
		t.Fatal(err)
	}
	gotTag, img, err := ReadArchive(file)
	if err != nil {
		t.Fatal(err)
	}
	if gotTag.String() != tag.String() {
		t.Errorf("archive tag %s, want %s", gotTag, tag)
	}
	// The archive keeps the config (whose digest is the image ID that
	// docker load reports) and the layers, though not the OCI manifest.
	c1, _ := first.ConfigName()
	if c, _ := img.ConfigName(); c != c1 {
		t.Errorf("read back image ID %s, built %s", c, c1)
	}
}

// TestImageContents checks what makes the image fit a restricted pod: a
// numeric non-root user, the entrypoint, the labels, and nothing but the
// binary and the user's files (no shell).
func TestImageContents(t *testing.T) {
	b, s := testBuild(t)
	img, err := b.Image(s)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cfg.Config.User)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/usr/local/bin/flotilla-agent" {
		t.Errorf("entrypoint %q", cfg.Config.Entrypoint)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  "v1.2.3",
		"org.opencontainers.image.source":   Source,
		"org.opencontainers.image.licenses": License,
		"org.opencontainers.image.revision": "abc123",
	} {
		if cfg.Config.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, cfg.Config.Labels[k], want)
		}
	}
	if !cfg.Created.Time.Equal(b.Created) {
		t.Errorf("created %s, want %s", cfg.Created, b.Created)
	}
	files := map[string]*tar.Header{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = h
		if !h.ModTime.Equal(b.Created) {
			t.Errorf("%s dated %s, want the build's %s", h.Name, h.ModTime, b.Created)
		}
	}
	for _, f := range []string{"usr/local/bin/flotilla-agent", "etc/passwd", "etc/group", "home/nonroot", "tmp"} {
		if files[f] == nil {
			t.Errorf("no %s in the image", f)
		}
	}
	for _, shell := range []string{"bin/sh", "bin/bash", "usr/bin/sh"} {
		if files[shell] != nil {
			t.Errorf("the image has a shell, %s", shell)
		}
	}
	if h := files["home/nonroot"]; h != nil && h.Uid != UID {
		t.Errorf("home owned by %d, want %d", h.Uid, UID)
	}
}
