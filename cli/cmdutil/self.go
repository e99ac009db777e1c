package cmdutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Self is how a command that a message suggests runs this flotilla
// executable, so that it works as typed: "flotilla" when that name on
// PATH is this executable, else the path it was started by
// (bin/flotilla), else its absolute path. In a process that is not a
// flotilla executable (a test binary running the CLI) it is "flotilla".
func Self() string {
	exe, err := os.Executable()
	if err != nil {
		return "flotilla"
	}
	return selfName(os.Args[0], exe, exec.LookPath)
}

// selfName is Self for an executable exe started as arg0, with lookPath
// finding names on PATH.
func selfName(arg0, exe string, lookPath func(string) (string, error)) string {
	if !strings.HasPrefix(filepath.Base(exe), "flotilla") {
		return "flotilla"
	}
	if onPath, err := lookPath("flotilla"); err == nil && SameFile(onPath, exe) {
		return "flotilla"
	}
	if strings.ContainsRune(arg0, os.PathSeparator) && SameFile(arg0, exe) {
		return arg0
	}
	return exe
}

// SameFile reports whether paths a and b name one file.
func SameFile(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}
