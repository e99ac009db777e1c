package cli

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const cliPath = "github.com/flotilla-io/flotilla/cli"

// maxFileLines bounds every file of the CLI: past it, a file is doing two
// things and should be split by what they are.
const maxFileLines = 400

// TestLayout keeps the CLI a tree that reads like its command line (see
// doc.go): a command package (cli/cmd/...) never imports another one, so
// that a change to one command cannot reach another; the shared library
// (cli/cmdutil/...) never imports a command or the root; and no file is
// longer than maxFileLines.
func TestLayout(t *testing.T) {
	files := 0
	err := filepath.WalkDir(".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".go") {
			return err
		}
		files++
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
			t.Errorf("cli/%s has %d lines, more than %d: split it by what it does", name, n, maxFileLines)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		own := path.Join(cliPath, filepath.ToSlash(filepath.Dir(name)))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if msg := layoutViolation(own, p); msg != "" {
				t.Errorf("cli/%s imports %s: %s", name, p, msg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked only %d files of the CLI: is the test running in cli/?", files)
	}
}

// layoutViolation says why the package own may not import p, or "".
func layoutViolation(own, p string) string {
	inside := func(pkg, tree string) bool {
		return pkg == cliPath+"/"+tree || strings.HasPrefix(pkg, cliPath+"/"+tree+"/")
	}
	switch {
	case inside(own, "cmd") && inside(p, "cmd") && p != own:
		return "a command package imports another command package; move what both need to cli/cmdutil"
	case inside(own, "cmdutil") && (p == cliPath || inside(p, "cmd")):
		return "cli/cmdutil is the library of the commands and may not import them or the root"
	}
	return ""
}

func TestLayoutViolation(t *testing.T) {
	for _, tt := range []struct {
		own, p string
		bad    bool
	}{
		{cliPath + "/cmd/get", cliPath + "/cmd/create", true},
		{cliPath + "/cmd/get", cliPath + "/cmd/get", false},
		{cliPath + "/cmd/get", cliPath + "/cmdutil", false},
		{cliPath + "/cmd/get", cliPath + "/cmdutil/workview", false},
		{cliPath + "/cmd/get", cliPath, false},
		{cliPath + "/cmdutil", cliPath + "/cmd/get", true},
		{cliPath + "/cmdutil/workview", cliPath, true},
		{cliPath + "/cmdutil/workview", cliPath + "/cmdutil", false},
		{cliPath, cliPath + "/cmd/get", false},
	} {
		if got := layoutViolation(tt.own, tt.p) != ""; got != tt.bad {
			t.Errorf("%s importing %s: violation %t, want %t", tt.own, tt.p, got, tt.bad)
		}
	}
}
