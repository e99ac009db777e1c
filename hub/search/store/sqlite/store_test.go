package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

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
