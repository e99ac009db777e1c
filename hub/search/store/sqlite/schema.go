package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] takes the schema from user_version i to i+1.
var migrations = []string{
	`CREATE TABLE objects (
		id INTEGER PRIMARY KEY,
		cluster TEXT NOT NULL,
		uid TEXT NOT NULL,
		grp TEXT NOT NULL,
		resource TEXT NOT NULL,
		kind TEXT NOT NULL,
		namespace TEXT NOT NULL,
		name TEXT NOT NULL,
		rv TEXT NOT NULL,
		status TEXT NOT NULL,
		owner_kind TEXT NOT NULL,
		owner_name TEXT NOT NULL,
		data BLOB NOT NULL
	);
	CREATE UNIQUE INDEX objects_uid ON objects (cluster, uid);
	CREATE UNIQUE INDEX objects_order ON objects (cluster, namespace, name, uid);
	CREATE INDEX objects_resource ON objects (cluster, grp, resource);
	CREATE INDEX objects_name ON objects (name);
	CREATE INDEX objects_status ON objects (status);
	CREATE INDEX objects_owner ON objects (owner_name);
	CREATE TABLE labels (
		id INTEGER NOT NULL,
		key TEXT NOT NULL,
		value TEXT NOT NULL,
		PRIMARY KEY (key, value, id)
	) WITHOUT ROWID;
	CREATE INDEX labels_id ON labels (id, key);
	CREATE TABLE fields (
		id INTEGER NOT NULL,
		path TEXT NOT NULL,
		value TEXT NOT NULL,
		PRIMARY KEY (path, value, id)
	) WITHOUT ROWID;
	CREATE INDEX fields_id ON fields (id);
	CREATE VIRTUAL TABLE texts USING fts5 (name, images, tokenize = 'trigram case_sensitive 1', detail = none);`,
}

// migrate brings the file's schema to the newest version.
func migrate(ctx context.Context, db *sql.DB) error {
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("the search index has schema version %d, newer than this hub's %d: run a newer hub, or remove the file to index anew", version, len(migrations))
	}
	for ; version < len(migrations); version++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[version]); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrating the schema to version %d: %w", version+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version+1)); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
