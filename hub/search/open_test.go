package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, "", dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, "search", "index.db")); err != nil {
		t.Errorf("the embedded index is not in the data directory: %v", err)
	}
	if s, err := Open(ctx, Off, dir); s != nil || err != nil {
		t.Errorf("off: %v, %v; want no index", s, err)
	}
	_, err = Open(ctx, "mysql://u:hunter2@db/x", dir)
	if err == nil || !strings.Contains(err.Error(), "want empty") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a wrong --search-database: %v; want what to give, without the password", err)
	}
}
