// Package snapshot backs up and restores an embedded hub: `flotilla-hub
// snapshot save` and `snapshot restore`.
//
// A snapshot is one gzip-compressed tar archive: manifest.json first (the
// format version, when and from which hub it was taken, and the size and
// SHA-256 of every other entry), then etcd/snapshot.db, a snapshot of the
// hub's etcd taken online through the etcd v3 maintenance API (consistent:
// one revision of the whole store), then the files under the data
// directory that the hub needs to come back as the same hub: the PKI (CA,
// service-account keys, serving and client certificates, the webhook's),
// admin.kubeconfig, and hub-identity (the name it holds its leader lease
// under, so that the restored hub takes it back at once). The etcd data
// directory, the lock file, etcd.url and logs are not files of the
// snapshot.
//
// Restore checks every entry against the manifest before it writes
// anything that counts, refuses a data directory that holds anything
// (unless told to replace it) or that a running hub holds, and builds etcd's
// data directory with etcdutl's snapshot restore, bumping the revision
// past anything clients may have seen and marking it compacted: agents'
// watches from before the restore end with "resource version too old",
// they list again and see the restored state, deletions included.
//
// The same archive also makes a hub of several embedded etcd members: each
// machine restores it on its own, with the member flags it will start with
// (the same --etcd-initial-cluster everywhere). Each member's etcd data is
// restored as that member of a new cluster, whose token derives from the
// archive, so that every machine computes the same member and cluster IDs,
// and a survivor of the lost cluster is refused as a stranger. A member
// takes from the archive only the PKI that the members share (the hub CA,
// the service-account keys, the etcd peer CA); the serving, client and
// peer certificates of the snapshot's hub name that hub's addresses, and
// each member makes its own at start. The first member named also takes
// the hub's identity in the leader election. Because the members restore
// independently, the shared etcd peer CA must come from the archive:
// Save puts a new one into the archive of a hub that has none (one
// process), never into the hub's data directory.
package snapshot
