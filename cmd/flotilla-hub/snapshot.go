package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/hub/snapshot"
)

func newSnapshotCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Back up a hub, or make a hub from a backup",
		Long: `Back up an embedded hub into one archive, or make a hub's data directory
from such an archive. See docs/ha.md for what a restore keeps and loses.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newSnapshotSaveCommand(), newSnapshotRestoreCommand())
	return cmd
}

func newSnapshotSaveCommand() *cobra.Command {
	o := snapshot.SaveOptions{}
	cmd := &cobra.Command{
		Use:   "save FILE",
		Short: "Write a snapshot of a hub (running or stopped) to FILE",
		Long: `Write a snapshot of the hub whose data directory is --data-dir to FILE: a
consistent snapshot of its etcd, taken online through etcd's maintenance API
while the hub runs, and the PKI and admin kubeconfig, in one gzip-compressed
tar archive with a manifest of SHA-256 checksums. When no hub runs on
--data-dir, its etcd data is opened here for the snapshot.`,
		Example: `  flotilla-hub snapshot save /backup/hub-$(date +%F).tar.gz --data-dir /var/lib/flotilla/hub`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			started := time.Now()
			m, err := snapshot.Save(cmd.Context(), o)
			if err != nil {
				return err
			}
			info, err := os.Stat(o.File)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Snapshot of %s written to %s (%s, %d files, %s before compression) in %s\n",
				o.DataDir, o.File, quantity(info.Size()), len(m.Entries), quantity(m.Size()), time.Since(started).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().StringVar(&o.DataDir, "data-dir", defaultDataDir(), "the hub's --data-dir")
	cmd.Flags().StringSliceVar(&o.EtcdServers, "etcd-servers", nil, "the hub's --etcd-servers, when it runs on an external etcd")
	return cmd
}

func newSnapshotRestoreCommand() *cobra.Command {
	o := snapshot.RestoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Make a hub's data directory from the snapshot FILE",
		Long: `Make --data-dir the data directory of the hub that FILE is a snapshot of: the
same CA and keys, so that agents reconnect with the certificates they hold,
and etcd's data as it was when the snapshot was taken, with its revision
moved forward so that clients list again. Then start flotilla-hub on it.
--data-dir must be empty or not exist, unless --replace is given.`,
		Example: `  flotilla-hub snapshot restore /backup/hub-2025-01-31.tar.gz --data-dir /var/lib/flotilla/hub-restored
  flotilla-hub --data-dir /var/lib/flotilla/hub-restored --secure-port 6443`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			started := time.Now()
			m, err := snapshot.Restore(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Restored the snapshot taken %s into %s in %s; start the hub with --data-dir %s\n",
				m.Created.Format(time.RFC3339), o.DataDir, time.Since(started).Round(time.Millisecond), o.DataDir)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.DataDir, "data-dir", "", "the data directory to create (required)")
	cmd.Flags().BoolVar(&o.Replace, "replace", false, "remove what --data-dir holds first (never while a hub runs on it)")
	_ = cmd.MarkFlagRequired("data-dir")
	return cmd
}

// quantity prints a byte count as 1.5 MiB and the like.
func quantity(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
