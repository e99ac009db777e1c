package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/hub/search/store/internal/sqlq"
)

// Store is the search index in one SQLite file.
type Store struct {
	path string
	// write has one connection: SQLite has one writer at a time, and
	// one connection makes batches queue in Go rather than spin on
	// SQLITE_BUSY.
	write *sql.DB
	read  *sql.DB
}

var _ store.Store = (*Store)(nil)

// readers is how many queries run at once.
const readers = 4

// Open opens (creating it and its directory if need be) the index at path
// and brings its schema to this version.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	pragmas := "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-32768)"
	write, err := sql.Open("sqlite", path+pragmas+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	if err := migrate(ctx, write); err != nil {
		_ = write.Close()
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", path+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		_ = write.Close()
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	// Statistics for the planner, cheap at any size (analysis_limit).
	if _, err := write.ExecContext(ctx, "PRAGMA analysis_limit = 1000; PRAGMA optimize = 0x10002"); err != nil {
		_ = write.Close()
		_ = read.Close()
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	return &Store{path: path, write: write, read: read}, nil
}

// Apply implements store.Store.
func (s *Store) Apply(ctx context.Context, cluster string, upserts []searchv1alpha1.Object, deletes []searchv1alpha1.ObjectRef) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	w := writer{ctx: ctx, tx: tx, cluster: cluster}
	for i := range upserts {
		o := &upserts[i]
		if err := sqlq.CheckUpsert(cluster, i, string(o.UID), o.Resource, o.Name); err != nil {
			return err
		}
		if err := w.upsert(o); err != nil {
			return s.wrap(err)
		}
	}
	for _, ref := range deletes {
		if err := w.delete(string(ref.UID)); err != nil {
			return s.wrap(err)
		}
	}
	return s.wrap(tx.Commit())
}

// writer writes one batch in its transaction.
type writer struct {
	ctx     context.Context
	tx      *sql.Tx
	cluster string
	// stmts are the batch's statements, prepared once per batch.
	stmts map[string]*sql.Stmt
}

func (w *writer) stmt(query string) (*sql.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	st, err := w.tx.PrepareContext(w.ctx, query)
	if err != nil {
		return nil, err
	}
	if w.stmts == nil {
		w.stmts = map[string]*sql.Stmt{}
	}
	w.stmts[query] = st
	return st, nil
}

func (w *writer) exec(query string, args ...any) (sql.Result, error) {
	st, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(w.ctx, args...)
}

func (w *writer) queryRow(query string, args ...any) *sql.Row {
	st, err := w.stmt(query)
	if err != nil {
		return w.tx.QueryRowContext(w.ctx, query, args...)
	}
	return st.QueryRowContext(w.ctx, args...)
}

func (w *writer) upsert(o *searchv1alpha1.Object) error {
	row, err := sqlq.Flatten(o)
	if err != nil {
		return err
	}
	var id int64
	var rv string
	err = w.queryRow("SELECT id, rv FROM objects WHERE cluster = ? AND uid = ?", w.cluster, row.UID).Scan(&id, &rv)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		res, err := w.exec(`INSERT INTO objects (cluster, uid, grp, resource, kind, namespace, name, rv, status, owner_kind, owner_name, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.cluster, row.UID, row.Group, row.Resource, row.Kind, row.Namespace, row.Name, row.RV, row.Status, row.OwnerKind, row.OwnerName, row.Data)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
	case err != nil:
		return err
	case !sqlq.Newer(rv, row.RV):
		return nil
	default:
		if _, err := w.exec(`UPDATE objects SET grp = ?, resource = ?, kind = ?, namespace = ?, name = ?, rv = ?, status = ?, owner_kind = ?, owner_name = ?, data = ?
			WHERE id = ?`,
			row.Group, row.Resource, row.Kind, row.Namespace, row.Name, row.RV, row.Status, row.OwnerKind, row.OwnerName, row.Data, id); err != nil {
			return err
		}
		if err := w.clear(id); err != nil {
			return err
		}
	}
	for k, v := range row.Labels {
		if _, err := w.exec("INSERT INTO labels (id, key, value) VALUES (?, ?, ?)", id, k, v); err != nil {
			return err
		}
	}
	for k, v := range row.Fields {
		if _, err := w.exec("INSERT INTO fields (id, path, value) VALUES (?, ?, ?)", id, k, v); err != nil {
			return err
		}
	}
	_, err = w.exec("INSERT INTO texts (rowid, name, images) VALUES (?, ?, ?)", id, strings.ToLower(row.Name), strings.Join(row.Images, "\n"))
	return err
}

// clear deletes an object's rows in the tables beside objects.
func (w *writer) clear(id int64) error {
	for _, q := range []string{"DELETE FROM labels WHERE id = ?", "DELETE FROM fields WHERE id = ?", "DELETE FROM texts WHERE rowid = ?"} {
		if _, err := w.exec(q, id); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) delete(uid string) error {
	var id int64
	err := w.queryRow("SELECT id FROM objects WHERE cluster = ? AND uid = ?", w.cluster, uid).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := w.clear(id); err != nil {
		return err
	}
	_, err = w.exec("DELETE FROM objects WHERE id = ?", id)
	return err
}

// Versions implements store.Store.
func (s *Store) Versions(ctx context.Context, cluster string, gr schema.GroupResource) (map[types.UID]string, error) {
	rows, err := s.read.QueryContext(ctx, "SELECT uid, rv FROM objects WHERE cluster = ? AND grp = ? AND resource = ?", cluster, gr.Group, gr.Resource)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	return sqlq.ReadMap[types.UID, string](rows, s.wrap)
}

// DeleteCluster implements store.Store.
func (s *Store) DeleteCluster(ctx context.Context, cluster string) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, q := range []string{
		"DELETE FROM labels WHERE id IN (SELECT id FROM objects WHERE cluster = ?)",
		"DELETE FROM fields WHERE id IN (SELECT id FROM objects WHERE cluster = ?)",
		"DELETE FROM texts WHERE rowid IN (SELECT id FROM objects WHERE cluster = ?)",
		"DELETE FROM objects WHERE cluster = ?",
	} {
		if _, err := tx.ExecContext(ctx, q, cluster); err != nil {
			return s.wrap(err)
		}
	}
	return s.wrap(tx.Commit())
}

// Clusters implements store.Store.
func (s *Store) Clusters(ctx context.Context) (map[string]int64, error) {
	rows, err := s.read.QueryContext(ctx, "SELECT cluster, count(*) FROM objects GROUP BY cluster")
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	return sqlq.ReadMap[string, int64](rows, s.wrap)
}

// dialect is SQLite's: names and images are found in the trigram table
// with GLOB, case-sensitive on the lowercased name.
var dialect = sqlq.Dialect{
	Placeholder: func(int) string { return "?" },
	NameContains: func(b *sqlq.Builder, s string) string {
		return "o.id IN (SELECT rowid FROM texts WHERE texts.name GLOB " + b.Arg("*"+globEscape(s)+"*") + ")"
	},
	ImageContains: func(b *sqlq.Builder, s string) string {
		return "o.id IN (SELECT rowid FROM texts WHERE texts.images GLOB " + b.Arg("*"+globEscape(s)+"*") + ")"
	},
}

// scanning is the dialect for a substring that many objects hold: read
// the objects in the page's order and test each, which stops once the page
// is full, rather than find every match in the trigram table and sort them.
var scanning = sqlq.Dialect{
	Placeholder: dialect.Placeholder,
	NameContains: func(b *sqlq.Builder, s string) string {
		return "instr(lower(o.name), " + b.Arg(s) + ") > 0"
	},
	ImageContains: func(b *sqlq.Builder, s string) string {
		return "EXISTS (SELECT 1 FROM texts t WHERE t.rowid = o.id AND instr(t.images, " + b.Arg(s) + ") > 0)"
	},
}

// broadMatches is how many objects holding a substring make scanning in
// order cheaper than the trigram table: past it, a page of 500 is found
// within a few tens of thousands of rows read in order.
var broadMatches = 10000

// broad says whether at least broadMatches objects have a name (column
// "name") or an image ("images") that contains s.
func (s *Store) broad(ctx context.Context, column, sub string) (bool, error) {
	if column == "name" {
		sub = strings.ToLower(sub)
	}
	var n int
	err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM texts WHERE texts."+column+" GLOB ? LIMIT ?)",
		"*"+globEscape(sub)+"*", broadMatches).Scan(&n)
	return n >= broadMatches, s.wrap(err)
}

// dialectFor picks, per substring search of q, the trigram table or a scan
// in order.
func (s *Store) dialectFor(ctx context.Context, q store.Query) (sqlq.Dialect, error) {
	d := dialect
	if q.NameContains != "" {
		broad, err := s.broad(ctx, "name", q.NameContains)
		if err != nil {
			return d, err
		}
		if broad {
			d.NameContains = scanning.NameContains
		}
	}
	for _, image := range q.Images {
		broad, err := s.broad(ctx, "images", image)
		if err != nil {
			return d, err
		}
		if broad {
			d.ImageContains = scanning.ImageContains
			break
		}
	}
	return d, nil
}

// globEscape makes GLOB's special characters match themselves.
func globEscape(s string) string {
	return strings.NewReplacer("[", "[[]", "*", "[*]", "?", "[?]").Replace(s)
}

// Query implements store.Store.
func (s *Store) Query(ctx context.Context, q store.Query) (store.Page, error) {
	sel, err := sqlq.Build(dialect, q)
	if err != nil || sel.Empty {
		return store.Page{}, err
	}
	if q.NameContains != "" || len(q.Images) > 0 {
		d, err := s.dialectFor(ctx, q)
		if err != nil {
			return store.Page{}, err
		}
		if sel, err = sqlq.Build(d, q); err != nil {
			return store.Page{}, err
		}
	}
	rows, err := s.read.QueryContext(ctx, sel.SQL, sel.Args...)
	if err != nil {
		return store.Page{}, s.wrap(err)
	}
	defer rows.Close()
	return sqlq.ReadPage(rows, sel.Limit, s.wrap)
}

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error {
	return s.wrap(s.read.QueryRowContext(ctx, "SELECT 1").Scan(new(int)))
}

// Size returns the bytes the index's file holds.
func (s *Store) Size(ctx context.Context) (int64, error) {
	var size int64
	if err := s.read.QueryRowContext(ctx, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").Scan(&size); err != nil {
		return 0, s.wrap(err)
	}
	return size, nil
}

// Close implements store.Store.
func (s *Store) Close() error {
	// Statistics for the next start's planner, as SQLite advises.
	_, _ = s.write.Exec("PRAGMA optimize")
	return errors.Join(s.read.Close(), s.write.Close())
}

// wrap makes the errors of a file that cannot be read or written, or of a
// closed store, wrap store.ErrUnavailable.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	var serr *sqlite.Error
	if errors.As(err, &serr) {
		switch serr.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL,
			sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %s: %w", store.ErrUnavailable, s.path, err)
		}
	}
	if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "database is closed") {
		return fmt.Errorf("%w: %s: %w", store.ErrUnavailable, s.path, err)
	}
	return fmt.Errorf("search index %s: %w", s.path, err)
}
