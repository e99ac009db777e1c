package search

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/hub/search/store/postgres"
	"github.com/flotilla-io/flotilla/hub/search/store/sqlite"
)

// Off is the --search-database value that turns search off.
const Off = "off"

// IndexPath is where the embedded index lives in the hub's data directory.
func IndexPath(dataDir string) string { return filepath.Join(dataDir, "search", "index.db") }

// Open opens the index that database names, as flotilla-hub's
// --search-database does: empty is the embedded SQLite index in dataDir
// (IndexPath), postgres://… or postgresql://… a PostgreSQL database, and
// Off no index at all (nil, nil).
func Open(ctx context.Context, database, dataDir string) (store.Store, error) {
	switch {
	case database == Off:
		return nil, nil
	case database == "":
		if dataDir == "" {
			return nil, fmt.Errorf("the embedded search index needs the hub's data directory (--data-dir), or give --search-database postgres://… or %s", Off)
		}
		return sqlite.Open(ctx, IndexPath(dataDir))
	case strings.HasPrefix(database, "postgres://"), strings.HasPrefix(database, "postgresql://"):
		return postgres.Open(ctx, database)
	}
	return nil, fmt.Errorf("--search-database %q: want empty (the embedded index in the data directory), postgres://user@host:port/database?sslmode=… or %s", redact(database), Off)
}

// redact keeps a mistyped DSN's password out of the error.
func redact(dsn string) string {
	if at := strings.LastIndex(dsn, "@"); at >= 0 {
		return "…" + dsn[at:]
	}
	return dsn
}
