package members

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/hub/controlplane"
)

// JoinInstructions say how to start a member added to the cluster, on its
// own machine: which files to copy there and the flotilla-hub flags.
type JoinInstructions struct {
	// Member is the added member, a learner not started yet.
	Member Member `json:"member"`
	// FromPKIDir is the pki directory on this machine the files come from.
	FromPKIDir string `json:"fromPKIDir"`
	// DataDir is the new member's --data-dir, empty but for the files.
	DataDir string `json:"dataDir"`
	// Files are the files to copy, relative to FromPKIDir and to
	// DataDir/pki on the new machine.
	Files []string `json:"files"`
	// InitialCluster is the new member's --etcd-initial-cluster: every
	// member, itself included.
	InitialCluster string `json:"initialCluster"`
	// Args are the new member's flotilla-hub arguments.
	Args []string `json:"args"`
	// HubServer is the new member's API server address, for the agents'
	// --hub-server.
	HubServer string `json:"hubServer"`
}

// Add adds a member named name with peerURL to the cluster, as a learner,
// and returns how to start it.
func (c *Cluster) Add(ctx context.Context, name, peerURL string) (JoinInstructions, error) {
	peer, err := checkNewMember(name, peerURL)
	if err != nil {
		return JoinInstructions{}, err
	}
	members, err := c.List(ctx)
	if err != nil {
		return JoinInstructions{}, err
	}
	if err := checkAdd(members, name, peer); err != nil {
		return JoinInstructions{}, err
	}
	port, err := servingPort(c.DataDir)
	if err != nil {
		return JoinInstructions{}, err
	}
	sans, err := controlplane.ExtraServingSANs(c.DataDir)
	if err != nil {
		return JoinInstructions{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := c.client.MemberAddAsLearner(ctx, []string{peer})
	if err != nil {
		return JoinInstructions{}, explain(err, "add member "+name)
	}
	added := Member{Name: name, ID: formatID(resp.Member.ID), PeerURLs: resp.Member.PeerURLs, Learner: resp.Member.IsLearner, id: resp.Member.ID}
	return joinInstructions(c.DataDir, members, added, port, sans), nil
}

// checkNewMember checks the name and peer URL of a member to add, and
// returns the peer URL as etcd will store it.
func checkNewMember(name, peerURL string) (string, error) {
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return "", fmt.Errorf("member name %q: %s (it becomes the new member's --etcd-name: use lower-case letters, digits, '-' and '.', such as hub-4)", name, strings.Join(msgs, "; "))
	}
	if peerURL == "" {
		return "", fmt.Errorf("--peer-url is required: the https://address:port at which the other members will reach %s (its --etcd-peer-url, port 2380 by convention)", name)
	}
	u, err := controlplane.ParsePeerURL("--peer-url", peerURL)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// checkAdd refuses to add a member that the cluster cannot take now.
func checkAdd(members []Member, name, peer string) error {
	for _, m := range members {
		if m.Local && len(m.PeerURLs) > 0 && !strings.HasPrefix(m.PeerURLs[0], "https://") {
			return fmt.Errorf("the hub on this --data-dir runs a single embedded etcd, not a member of a cluster: members can be added only to hubs started with --etcd-initial-cluster (docs/ha.md, \"Three embedded etcd members\"); to move a single hub onto members, restore a snapshot into them")
		}
	}
	for _, m := range members {
		if m.Name == name {
			return fmt.Errorf("a member named %s exists already (ID %s, peer URL %s): choose another name, or remove it first (flotilla-hub member remove %s) when it is the one being replaced", name, m.ID, strings.Join(m.PeerURLs, ","), name)
		}
		for _, u := range m.PeerURLs {
			if sameURL(u, peer) {
				return fmt.Errorf("member %s has the peer URL %s already: give the new member its own address, or remove %s first (flotilla-hub member remove %s) when the new one replaces it on the same address", m, peer, m, removeArg(m))
			}
		}
		if !m.Started {
			return fmt.Errorf("member %s was added but has never started: start it first with the flags flotilla-hub member add printed, or remove it (flotilla-hub member remove %s); one member joins at a time", m, m.ID)
		}
	}
	var silent []Member
	for _, m := range voters(members) {
		if !m.Answers {
			silent = append(silent, m)
		}
	}
	if len(silent) > 0 {
		return fmt.Errorf("voting member %s does not answer on its peer URL, and etcd adds a member only while every voting member is connected: if it is lost for good, remove it first (flotilla-hub member remove %s), then add its replacement; otherwise start it again", names(silent), removeArg(silent[0]))
	}
	return nil
}

// removeArg is what names m on flotilla-hub member remove.
func removeArg(m Member) string {
	if m.Name != "" {
		return m.Name
	}
	return m.ID
}

func sameURL(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return ua.Scheme == ub.Scheme && strings.EqualFold(ua.Hostname(), ub.Hostname()) && ua.Port() == ub.Port()
}

// servingPort is the --secure-port of the hub on dataDir, from its admin
// kubeconfig: the members usually share it.
func servingPort(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "admin.kubeconfig")
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", fmt.Errorf("read the hub's port from %s: %w", path, err)
	}
	for _, cl := range cfg.Clusters {
		if u, err := url.Parse(cl.Server); err == nil && u.Port() != "" {
			return u.Port(), nil
		}
	}
	return "", fmt.Errorf("%s names no server with a port", path)
}

// joinInstructions says how to start added on its machine, next to members
// (the cluster before the add), with the local hub's port and the extra
// names of its serving certificate.
func joinInstructions(dataDir string, members []Member, added Member, port string, sans []string) JoinInstructions {
	var initial []string
	for _, m := range members {
		for _, u := range m.PeerURLs {
			initial = append(initial, m.Name+"="+u)
		}
	}
	for _, u := range added.PeerURLs {
		initial = append(initial, added.Name+"="+u)
	}
	peer, _ := url.Parse(added.PeerURLs[0])
	host := peer.Hostname()
	if !slices.Contains(sans, host) {
		sans = append(sans, host)
	}
	args := []string{"--data-dir", dataDir, "--bind-address", "0.0.0.0"}
	if net.ParseIP(host) != nil {
		args = append(args, "--advertise-address", host)
	}
	args = append(args, "--secure-port", port, "--tls-san", strings.Join(sans, ","),
		"--etcd-name", added.Name, "--etcd-peer-url", added.PeerURLs[0],
		"--etcd-initial-cluster", strings.Join(initial, ","),
		"--etcd-initial-cluster-state", controlplane.ClusterStateExisting)
	return JoinInstructions{
		Member:         added,
		FromPKIDir:     filepath.Join(dataDir, "pki"),
		DataDir:        dataDir,
		Files:          controlplane.SharedPKIFiles(),
		InitialCluster: strings.Join(initial, ","),
		Args:           args,
		HubServer:      net.JoinHostPort(host, port),
	}
}

// WriteText prints the instructions for a person.
func (j JoinInstructions) WriteText(w io.Writer) {
	fmt.Fprintf(w, `Added %s to the etcd cluster as a learner (ID %s, peer URL %s).
A learner receives the data but does not vote: until it has caught up, the
cluster needs a majority of the same voting members as before. The new
member's hub promotes it to a voting member once it has caught up, then
starts its API server.

On the new machine, before its first start, with %s holding nothing else:

1. Copy these files from %s on this machine into %s/pki there
   (directories 0700, files 0600; the keys are secrets):
     %s

2. Start the hub (add the other flags the members run with, such as
   --leader-elect-*; the ones below are what this member must have):
     flotilla-hub %s

3. Give the agents its address: add %s to flotilla-agent --hub-server.

Until it starts, flotilla-hub member list shows it as not started;
flotilla-hub member remove %s undoes this add.
`, j.Member.Name, j.Member.ID, strings.Join(j.Member.PeerURLs, ","), j.DataDir,
		j.FromPKIDir, j.DataDir, strings.Join(j.Files, " "),
		shellLine(j.Args), j.HubServer, j.Member.ID)
}

// shellLine prints args for a shell, one flag and its value a line.
func shellLine(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if strings.HasPrefix(a, "--") && i > 0 {
			b.WriteString(" \\\n       ")
		} else if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
