package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/hub/search/store/storetest"
)

// TestConformanceScanning runs the suite with every substring that any
// object holds taken as broad, so that the scan in order answers the
// searches the trigram table answers in TestConformance.
func TestConformanceScanning(t *testing.T) {
	defer func(n int) { broadMatches = n }(broadMatches)
	broadMatches = 1
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "index.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
