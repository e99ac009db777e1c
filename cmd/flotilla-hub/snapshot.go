package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/hub/controlplane"
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
--data-dir, its etcd data is opened here for the snapshot. A hub that has no
etcd peer CA (one process) gets a new one in the archive, not in --data-dir,
so that the members of a hub restored from it share one.`,
		Example: `  flotilla-hub snapshot save /backup/hub-$(date +%F).tar.gz --data-dir /var/lib/flotilla/hub

  # A hub on an external etcd over TLS: the PKI from --data-dir, the store from etcd.
  flotilla-hub snapshot save /backup/hub.tar.gz --data-dir /var/lib/flotilla/hub \
    --etcd-servers https://etcd-1:2379,https://etcd-2:2379 \
    --etcd-cafile /etc/etcd/ca.crt --etcd-certfile /etc/flotilla/etcd-client.crt --etcd-keyfile /etc/flotilla/etcd-client.key`,
		Args: cobra.ExactArgs(1),
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
	cmd.Flags().StringSliceVar(&o.EtcdServers, "etcd-servers", nil, "the hub's --etcd-servers, when it runs on an external etcd (the snapshot is asked of the first member that answers)")
	cmd.Flags().StringVar(&o.EtcdTLS.CAFile, "etcd-cafile", "", "with --etcd-servers over https: the CA of the etcd servers' certificates (the hub's --etcd-cafile)")
	cmd.Flags().StringVar(&o.EtcdTLS.CertFile, "etcd-certfile", "", "with --etcd-servers over https: the client certificate to authenticate to etcd with (the hub's --etcd-certfile)")
	cmd.Flags().StringVar(&o.EtcdTLS.KeyFile, "etcd-keyfile", "", "with --etcd-servers over https: the key of --etcd-certfile (the hub's --etcd-keyfile)")
	return cmd
}

func newSnapshotRestoreCommand() *cobra.Command {
	o := snapshot.RestoreOptions{}
	member := controlplane.EtcdMember{}
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Make a hub's data directory from the snapshot FILE",
		Long: `Make --data-dir the data directory of the hub that FILE is a snapshot of: the
same CA and keys, so that agents reconnect with the certificates they hold,
and etcd's data as it was when the snapshot was taken, with its revision
moved forward so that clients list again. Then start flotilla-hub on it.
--data-dir must be empty or not exist, unless --replace is given.

With --etcd-initial-cluster, --etcd-name and --etcd-peer-url, make the data
directory of one member of a hub of several embedded etcd members: run the
same command, with the same FILE and the same --etcd-initial-cluster, on
every member's machine, each with its own --etcd-name and --etcd-peer-url,
then start every member with those flags. Each member gets etcd's data as
one of the new cluster's members, the CA, the service-account keys and the
etcd peer CA from FILE; it makes its own serving, client and peer
certificates at start. The snapshot may be of a single-process hub or of
any member of a hub. See docs/ha.md.`,
		Example: `  flotilla-hub snapshot restore /backup/hub-2025-01-31.tar.gz --data-dir /var/lib/flotilla/hub-restored
  flotilla-hub --data-dir /var/lib/flotilla/hub-restored --secure-port 6443

  # A hub of three members, from the same archive on each machine (here the second):
  MEMBERS=hub-1=https://192.0.2.11:2380,hub-2=https://192.0.2.12:2380,hub-3=https://192.0.2.13:2380
  flotilla-hub snapshot restore /backup/hub.tar.gz --data-dir /var/lib/flotilla/hub \
    --etcd-name hub-2 --etcd-peer-url https://192.0.2.12:2380 --etcd-initial-cluster $MEMBERS
  flotilla-hub --data-dir /var/lib/flotilla/hub --bind-address 0.0.0.0 \
    --advertise-address 192.0.2.12 --tls-san 192.0.2.11,192.0.2.12,192.0.2.13 \
    --etcd-name hub-2 --etcd-peer-url https://192.0.2.12:2380 --etcd-initial-cluster $MEMBERS`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			if member.InitialCluster != "" {
				o.Member = &member
			} else {
				for _, name := range []string{"etcd-name", "etcd-peer-url"} {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s restores a member of a hub of several etcd members: give --etcd-initial-cluster too", name)
					}
				}
			}
			started := time.Now()
			m, err := snapshot.Restore(cmd.Context(), o)
			if err != nil {
				return err
			}
			took := time.Since(started).Round(time.Millisecond)
			out := cmd.ErrOrStderr()
			if o.Member == nil {
				fmt.Fprintf(out, "Restored the snapshot taken %s into %s in %s; start the hub with --data-dir %s\n",
					m.Created.Format(time.RFC3339), o.DataDir, took, o.DataDir)
				return nil
			}
			fmt.Fprintf(out, "Restored the snapshot taken %s into %s as etcd member %s of %s in %s.\n",
				m.Created.Format(time.RFC3339), o.DataDir, member.Name, member.InitialCluster, took)
			if !m.HasEtcdCA() && member.Name != member.First() {
				fmt.Fprintf(out, "The snapshot holds no etcd peer CA (an older flotilla-hub saved it): before this member's first start, copy pki/etcd/ca.crt and pki/etcd/ca.key from the data directory of member %s, which made them at its restore, into %s.\n",
					member.First(), filepath.Join(o.DataDir, "pki", "etcd"))
			}
			fmt.Fprintf(out, "Restore every member from the same snapshot, then start each with its member flags:\n  flotilla-hub --data-dir %s --etcd-name %s --etcd-peer-url %s --etcd-initial-cluster %s\n",
				o.DataDir, member.Name, member.PeerURL, member.InitialCluster)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.DataDir, "data-dir", "", "the data directory to create (required)")
	cmd.Flags().BoolVar(&o.Replace, "replace", false, "remove what --data-dir holds first (never while a hub runs on it)")
	cmd.Flags().StringVar(&member.InitialCluster, "etcd-initial-cluster", "", "restore a member of a hub of several etcd members: every member as name=https://address:port (its peer URL), comma separated, the same on each machine and at the member's start")
	cmd.Flags().StringVar(&member.Name, "etcd-name", "", "this member's name in --etcd-initial-cluster")
	cmd.Flags().StringVar(&member.PeerURL, "etcd-peer-url", "", "https://address:port at which the other members reach this one, as in --etcd-initial-cluster")
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
