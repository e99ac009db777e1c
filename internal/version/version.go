// Package version holds the build's version, set at link time by the Makefile.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the Flotilla release, and so the images' tag; the Makefile
// sets it from the charts' appVersion.
var Version = "v0.0.0-dev"

// Commit is the commit the binary was built from; the Makefile sets it
// (git describe's --dirty marks uncommitted changes).
var Commit = ""

// Revision is the commit the binary was built from: Commit, else Go's own
// stamp (vcs.revision, shortened; "-dirty" for uncommitted changes); ""
// when there is neither, as in tests. A release names many commits: this
// says which one runs.
func Revision() string {
	if Commit != "" {
		return Commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && modified {
		rev += "-dirty"
	}
	return rev
}

// String describes the build in one line.
func String() string {
	if rev := Revision(); rev != "" {
		return fmt.Sprintf("%s (commit %s, %s, %s/%s)", Version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
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
