// Package version holds the build's version, set at link time by the Makefile.
package version

import (
	"fmt"
	"runtime"
)

// Version is the Flotilla release; the Makefile sets it from git.
var Version = "v0.0.0-dev"

// String describes the build in one line.
func String() string {
	return fmt.Sprintf("%s (%s, %s/%s)", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Registry is where the images of this build are published; the Makefile
// sets it from REGISTRY.
var Registry = "ghcr.io/flotilla-io"

// Image is the reference of this build's image of a Flotilla binary, e.g.
// Image("flotilla-agent"): the tag `make images` writes.
func Image(binary string) string {
	return Registry + "/" + binary + ":" + Version
}
