package framework

import (
	"fmt"
	"os"
	"path/filepath"
)

// SharedExample returns the path of ../shared/examples/name, the project's
// reference examples kept beside the repository. It looks beside every
// directory above the working directory, so that tests run alike from the
// main checkout, from a worktree or from CI's clone next to "shared".
func SharedExample(name string) (string, error) {
	dir, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "shared", "examples", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no shared/examples/%s beside any directory above the working directory: check out the shared reference next to the repository", name)
		}
		dir = parent
	}
}
