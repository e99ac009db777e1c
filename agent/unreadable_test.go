package agent

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnreadableSpokeKubeconfig: a kubeconfig the agent may not read says
// whom the agent runs as, which file, and how to fix it.
func TestUnreadableSpokeKubeconfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "spoke.kubeconfig")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if os.Getuid() == 0 {
		// root reads every file: the error the kernel gives anyone else.
		err = explainUnreadable("--kubeconfig", file, &fs.PathError{Op: "open", Path: file, Err: syscall.EACCES})
	} else {
		if err := os.Chmod(file, 0o000); err != nil {
			t.Fatal(err)
		}
		_, err = loadSpokeConfig(file)
	}
	if err == nil {
		t.Fatal("no error for an unreadable kubeconfig")
	}
	for _, want := range []string{"permission denied", "The agent runs as uid", "--kubeconfig " + file, `docker run --user "$(id -u):$(id -g)"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if other := explainUnreadable("--kubeconfig", file+".missing", os.ErrNotExist); other != os.ErrNotExist {
		t.Errorf("a missing file: %v, want the error as it is", other)
	}
}
