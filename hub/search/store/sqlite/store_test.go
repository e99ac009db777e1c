package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"

	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/hub/search/store/sqlite"
	"github.com/flotilla-io/flotilla/hub/search/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "search", "index.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// BenchmarkFleet: SEARCH_FLEET=1000x1000 go test -run '^$' -bench Fleet -benchtime 1x ./hub/search/store/sqlite
func BenchmarkFleet(b *testing.B) {
	storetest.BenchmarkFleet(b, "sqlite", func(b *testing.B) store.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "index.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestClosedIsUnavailable(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(ctx, store.Query{}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Query of a closed store: %v, want ErrUnavailable", err)
	}
	if err := s.Apply(ctx, "a", nil, nil); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Apply to a closed store: %v, want ErrUnavailable", err)
	}
}

func TestReopenKeepsObjects(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, "a", []searchv1alpha1.Object{storetest.FleetObject(0, 0)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("opening again: %v", err)
	}
	defer s.Close()
	if counts, err := s.Clusters(ctx); err != nil || counts["a"] != 1 {
		t.Errorf("after opening again: %v, %v; want a's one object", counts, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	_, err = sqlite.Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("opening a file of schema version 99: %v, want an error naming the version", err)
	}
}
