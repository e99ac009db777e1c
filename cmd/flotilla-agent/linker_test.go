package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoMethodLookupByName links the agent as the Makefile builds it (with
// its AGENT_TAGS) and fails when a function that looks methods up by a
// run-time name (reflect.Value.Method or MethodByName with a name not
// constant, as text/template's executor does) is reachable: the linker
// then keeps every exported method of every type the agent can reach, and
// the binary grows from about 59 MB to 86 MB, most of it resident
// (docs/benchmarks.md, Registration). It says which symbol and what
// reaches it.
func TestNoMethodLookupByName(t *testing.T) {
	if testing.Short() {
		t.Skip("links the agent (about 20 s)")
	}
	tags := makefileVar(t, "AGENT_TAGS")
	cmd := exec.Command("go", "build", "-tags", tags, "-ldflags=-dumpdep", "-o", os.DevNull, ".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build -tags %s -ldflags=-dumpdep: %v\n%s", tags, err, tail(out))
	}
	// -dumpdep prints "from -> to" for each symbol the first time it is
	// reached, "<ReflectMethod>" after those that look methods up by name.
	firstFrom := map[string]string{}
	flagged := map[string]bool{}
	var order []string // flagged symbols, in the order the linker reached them
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, m := range reflectMethod.FindAllStringSubmatch(line, -1) {
			if !flagged[m[1]] {
				flagged[m[1]] = true
				order = append(order, m[1])
			}
		}
		from, to, ok := strings.Cut(line, " -> ")
		if !ok {
			continue
		}
		lines++
		from, to = clean(from), clean(to)
		if _, seen := firstFrom[to]; !seen {
			firstFrom[to] = from
		}
	}
	if lines == 0 {
		t.Fatalf("go build -ldflags=-dumpdep printed no dependencies: cannot check\n%s", tail(out))
	}
	if len(order) == 0 {
		return
	}
	// The first reached is the cause; once one is reachable, the linker
	// keeps every exported method, and with them the others.
	chain := []string{order[0]}
	for cur := order[0]; len(chain) < 20; {
		prev := firstFrom[cur]
		if prev == "" {
			break
		}
		chain, cur = append(chain, prev), prev
	}
	t.Errorf("the agent reaches %s, which looks methods up by a run-time name, so the linker keeps every exported method "+
		"of every type (use internal/tmplexec instead of text/template, or leave the dependency out with its build tag); "+
		"reached through:\n    %s\n(%d such functions reachable in all: %s)",
		order[0], strings.Join(chain, "\n <- "), len(order), strings.Join(order, ", "))
}

var (
	reflectMethod = regexp.MustCompile(`(\S+) <ReflectMethod>`)
	attr          = regexp.MustCompile(` <[A-Za-z]+>`)
)

func clean(s string) string { return strings.TrimSpace(attr.ReplaceAllString(s, "")) }

// makefileVar is the value of NAME := value in the repository's Makefile.
func makefileVar(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(\S+)\s*$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("Makefile: no %s := ...", name)
	}
	return string(m[1])
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
