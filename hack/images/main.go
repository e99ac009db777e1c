// Command images builds Flotilla's container images from static binaries,
// without a container engine, and pushes them; `make images` and
// `make push` run it (see package internal/ociimage).
//
//	go run ./hack/images build --bin-dir bin/linux-amd64 --out bin/images \
//	    --registry ghcr.io/flotilla-io --version v0.1.0 --revision $(git rev-parse HEAD) \
//	    --created $(git log -1 --format=%ct) flotilla-hub flotilla-agent flotilla
//	go run ./hack/images push bin/images/*.tar
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/flotilla-io/flotilla/internal/ociimage"
)

// descriptions of the images, by binary.
var descriptions = map[string]string{
	"flotilla-hub":         "Flotilla hub: embedded control plane and the hub controllers, or the controllers alone against an existing cluster (--kubeconfig)",
	"flotilla-agent":       "Flotilla agent: joins a managed cluster to a Flotilla or OCM hub",
	"flotilla":             "flotilla command line, for Jobs and CI",
	"flotilla-dev-cluster": "Simulated Kubernetes cluster for development and tests",
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "push":
		err = push(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: images build [flags] BINARY...   (flags: images build -h)\n       images push ARCHIVE...")
	os.Exit(2)
}

func build(args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	binDir := fs.String("bin-dir", "", "directory with the static linux binaries")
	out := fs.String("out", "bin/images", "directory to write the image archives <binary>.tar to")
	registry := fs.String("registry", "ghcr.io/flotilla-io", "registry and path of the images' tags")
	version := fs.String("version", "", "version: the images' tag and org.opencontainers.image.version")
	revision := fs.String("revision", "", "git commit of the binaries")
	created := fs.Int64("created", 0, "creation time in Unix seconds (the commit's, so that builds of one commit are identical)")
	platform := fs.String("platform", "linux/amd64", "platform of the binaries")
	_ = fs.Parse(args)
	if *binDir == "" || *version == "" || fs.NArg() == 0 {
		return fmt.Errorf("--bin-dir, --version and at least one binary name are required")
	}
	p, err := v1.ParsePlatform(*platform)
	if err != nil {
		return err
	}
	b := ociimage.Build{Version: *version, Revision: *revision, Created: time.Unix(*created, 0).UTC(), Platform: *p}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for _, bin := range fs.Args() {
		img, err := b.Image(ociimage.Spec{Name: bin, Binary: filepath.Join(*binDir, bin), Description: descriptions[bin]})
		if err != nil {
			return err
		}
		tag, err := name.NewTag(strings.TrimSuffix(*registry, "/") + "/" + bin + ":" + *version)
		if err != nil {
			return fmt.Errorf("--registry %s and --version %s make no valid tag: %w", *registry, *version, err)
		}
		file := filepath.Join(*out, bin+".tar")
		if err := ociimage.WriteArchive(file, tag, img); err != nil {
			return fmt.Errorf("write %s: %w", file, err)
		}
		digest, err := img.Digest()
		if err != nil {
			return err
		}
		size, err := ociimage.CompressedSize(img)
		if err != nil {
			return err
		}
		fmt.Printf("%s\t%s@%s\t%.1f MiB compressed\n", file, tag, digest, float64(size)/(1<<20))
	}
	return nil
}

func push(files []string) error {
	if len(files) == 0 {
		return fmt.Errorf("name the image archives to push, e.g. bin/images/*.tar")
	}
	for _, f := range files {
		ref, err := ociimage.Push(f)
		if err != nil {
			return err
		}
		fmt.Println("pushed", ref)
	}
	return nil
}
