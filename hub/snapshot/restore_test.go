package snapshot

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entryFile is one file for a hand-made archive.
type entryFile struct {
	path    string
	content string
}

// writeTestArchive writes an archive of files whose manifest lists listed
// (nil: the files themselves, with their true sums).
func writeTestArchive(t *testing.T, files []entryFile, listed []Entry) string {
	t.Helper()
	if listed == nil {
		for _, f := range files {
			sum := sha256.Sum256([]byte(f.content))
			listed = append(listed, Entry{Path: f.path, Size: int64(len(f.content)), Mode: 0o600, SHA256: hex.EncodeToString(sum[:])})
		}
	}
	path := filepath.Join(t.TempDir(), "s.tar.gz")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	manifest, _ := json.Marshal(Manifest{FormatVersion: FormatVersion, Entries: listed})
	for _, f := range append([]entryFile{{manifestName, string(manifest)}}, files...) {
		if err := tw.WriteHeader(&tar.Header{Name: f.path, Mode: 0o600, Size: int64(len(f.content))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExtractChecksEveryEntry(t *testing.T) {
	good := []entryFile{{etcdEntry, "db"}, {"pki/ca.crt", "ca"}}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	tests := []struct {
		name    string
		files   []entryFile
		listed  []Entry
		wantErr string
	}{
		{name: "complete and intact", files: good},
		{
			name:    "a file changed after the manifest was written",
			files:   []entryFile{{etcdEntry, "db"}, {"pki/ca.crt", "other"}},
			listed:  []Entry{{Path: etcdEntry, Size: 2, SHA256: sum("db")}, {Path: "pki/ca.crt", Size: 5, SHA256: sum("ca")}},
			wantErr: "pki/ca.crt does not match its checksum in the manifest",
		},
		{
			name:    "a listed file missing",
			files:   []entryFile{{etcdEntry, "db"}},
			listed:  []Entry{{Path: etcdEntry, Size: 2, SHA256: sum("db")}, {Path: "pki/ca.crt", Size: 2, SHA256: sum("ca")}},
			wantErr: "lacks pki/ca.crt",
		},
		{
			name:    "a file the manifest does not list",
			files:   good,
			listed:  []Entry{{Path: etcdEntry, Size: 2, SHA256: sum("db")}},
			wantErr: `holds "pki/ca.crt", which its manifest does not list`,
		},
		{
			name:    "a path outside the data directory",
			files:   []entryFile{{"../evil", "x"}},
			wantErr: `names "../evil", outside the data directory`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := extract(writeTestArchive(t, tt.files, tt.listed), dir)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("extract: %v", err)
				}
				data, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
				if err != nil || string(data) != "ca" {
					t.Fatalf("pki/ca.crt = %q, %v", data, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("extract error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestExtractRefusesWhatIsNotASnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain.txt")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := extract(path, t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a hub snapshot") {
		t.Fatalf("extract error = %v", err)
	}
}

func TestRestoreRefusesANonEmptyDataDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin.kubeconfig"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	archive := writeTestArchive(t, []entryFile{{etcdEntry, "db"}}, nil)
	_, err := Restore(t.Context(), RestoreOptions{File: archive, DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "is not empty (it holds admin.kubeconfig)") {
		t.Fatalf("Restore error = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "admin.kubeconfig")); err != nil {
		t.Fatalf("the refused directory was changed: %v", err)
	}
}
