package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The unprivileged user every image runs as: distroless' "nonroot".
const (
	UID     = 65532
	Home    = "/home/nonroot"
	BinDir  = "/usr/local/bin"
	License = "Apache-2.0"
	Source  = "https://github.com/flotilla-io/flotilla"
)

// Spec describes one image: a single static binary as its entrypoint.
type Spec struct {
	// Name is the binary's and the image's name, e.g. "flotilla-agent".
	Name string
	// Binary is the path of the static linux binary to put in the image.
	Binary string
	// Description is the image's org.opencontainers.image.description.
	Description string
}

// Build describes what every image of one build shares.
type Build struct {
	// Version is the Flotilla version, also the images' tag.
	Version string
	// Revision is the git commit the binaries were built from.
	Revision string
	// Created is the time written into the images; a fixed one (the
	// commit's) makes two builds of one commit the same digest.
	Created time.Time
	// Platform is the binaries' platform, e.g. linux/amd64.
	Platform v1.Platform
}

// Image assembles the image of s: a base layer with the nonroot user's
// passwd and group entries, its home and /tmp, and a layer with the binary.
func (b Build) Image(s Spec) (v1.Image, error) {
	base, err := layer(b.Created, baseFiles())
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("read the binary of image %s: %w (build it first: make images builds it)", s.Name, err)
	}
	app, err := layer(b.Created, []file{
		{name: "usr/", dir: true, mode: 0o755},
		{name: "usr/local/", dir: true, mode: 0o755},
		{name: "usr/local/bin/", dir: true, mode: 0o755},
		{name: strings.TrimPrefix(path.Join(BinDir, s.Name), "/"), mode: 0o755, data: bin},
	})
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, base, app); err != nil {
		return nil, err
	}
	labels := b.labels(s)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: b.Created}
	cfg.Architecture, cfg.OS, cfg.Variant = b.Platform.Architecture, b.Platform.OS, b.Platform.Variant
	cfg.Author = Source
	cfg.Config = v1.Config{
		Entrypoint: []string{path.Join(BinDir, s.Name)},
		User:       fmt.Sprintf("%d:%d", UID, UID),
		WorkingDir: Home,
		Env:        []string{"HOME=" + Home, "PATH=" + BinDir + ":/usr/bin:/bin"},
		Labels:     labels,
	}
	// History, one entry per layer, tells `docker history` what each holds.
	cfg.History = []v1.History{
		{Created: v1.Time{Time: b.Created}, CreatedBy: "flotilla images: nonroot user " + fmt.Sprint(UID), Comment: "base"},
		{Created: v1.Time{Time: b.Created}, CreatedBy: "flotilla images: " + path.Join(BinDir, s.Name), Comment: s.Name},
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

// labels are the OCI annotations, both on the config (docker inspect shows
// them) and on the manifest (registries show them).
func (b Build) labels(s Spec) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       s.Name,
		"org.opencontainers.image.description": s.Description,
		"org.opencontainers.image.version":     b.Version,
		"org.opencontainers.image.revision":    b.Revision,
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.licenses":    License,
		"org.opencontainers.image.created":     b.Created.UTC().Format(time.RFC3339),
	}
}

// WriteArchive writes img, tagged ref, as a `docker save` archive, which
// docker load, podman load and kind load image-archive read.
func WriteArchive(file string, ref name.Tag, img v1.Image) error {
	return tarball.MultiRefWriteToFile(file, map[name.Reference]v1.Image{ref: img})
}

// ReadArchive reads the image and its tag back from an archive of WriteArchive.
func ReadArchive(file string) (name.Tag, v1.Image, error) {
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(file) })
	if err != nil {
		return name.Tag{}, nil, fmt.Errorf("read %s: %w", file, err)
	}
	if len(m) != 1 || len(m[0].RepoTags) != 1 {
		return name.Tag{}, nil, fmt.Errorf("%s: want one image with one tag, as make images writes", file)
	}
	tag, err := name.NewTag(m[0].RepoTags[0])
	if err != nil {
		return name.Tag{}, nil, err
	}
	img, err := tarball.ImageFromPath(file, &tag)
	return tag, img, err
}

type file struct {
	name string
	dir  bool
	mode int64
	uid  int
	data []byte
}

func baseFiles() []file {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, UID, Home)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", UID)
	return []file{
		{name: "etc/", dir: true, mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "home/", dir: true, mode: 0o755},
		{name: strings.TrimPrefix(Home, "/") + "/", dir: true, mode: 0o700, uid: UID},
		{name: "tmp/", dir: true, mode: 0o1777},
	}
}

// layer is a gzipped OCI layer of files, each dated t and owned by root
// unless it says otherwise: nothing of the build machine gets in.
func layer(t time.Time, files []file) (v1.Layer, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: t}
		if f.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

// CompressedSize is what pulling img transfers: its layers as stored.
func CompressedSize(img v1.Image) (int64, error) {
	layers, err := img.Layers()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
