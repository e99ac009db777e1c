package members

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/hub/controlplane"
)

// requestTimeout bounds each call to the local etcd member. A membership
// change is committed by a majority of the voting members: when it is not
// within this time, a majority is not there.
const requestTimeout = 15 * time.Second

// probeTimeout bounds the wait for a member to answer on its peer URL.
const probeTimeout = 2 * time.Second

// Member is one member of the etcd cluster.
type Member struct {
	// Name is the member's --etcd-name; empty until it first starts.
	Name string `json:"name"`
	// ID is etcd's member ID, in hexadecimal as etcd prints it.
	ID string `json:"id"`
	// PeerURLs are where the other members reach it.
	PeerURLs []string `json:"peerURLs"`
	// ClientURLs are where its own hub's API server reaches it (on that
	// machine's loopback); empty until it first starts.
	ClientURLs []string `json:"clientURLs,omitempty"`
	// Started says that the member has started once and published its
	// name; a started member may have died since (see Answers).
	Started bool `json:"started"`
	// Learner says that the member receives the data but does not vote
	// yet.
	Learner bool `json:"learner"`
	// Leader says that the member is the raft leader, as the local member
	// knows it.
	Leader bool `json:"leader"`
	// Answers says that the member answered on its peer URL just now.
	Answers bool `json:"answers"`
	// Local says that the member is the one of the hub on --data-dir.
	Local bool `json:"local"`

	id uint64
}

// String names the member for messages: its name, or its ID and peer URL
// before it has started.
func (m Member) String() string {
	if m.Name != "" {
		return m.Name
	}
	return fmt.Sprintf("%s (not started yet, peer URL %s)", m.ID, strings.Join(m.PeerURLs, ","))
}

// Cluster is the etcd cluster as seen from the member of the hub running on
// DataDir.
type Cluster struct {
	DataDir  string
	client   *clientv3.Client
	endpoint string
	peers    *http.Client
}

// Connect reaches the etcd member of the hub running on dataDir.
func Connect(ctx context.Context, dataDir string) (*Cluster, error) {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	endpoint, err := controlplane.RunningEtcd(dataDir)
	if err != nil {
		return nil, err
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 5 * time.Second,
		Context:     ctx,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("reach the etcd of the hub running on %s at %s: %w", dataDir, endpoint, err)
	}
	peers, err := peerClient(dataDir)
	if err != nil {
		client.Close()
		return nil, err
	}
	return &Cluster{DataDir: dataDir, client: client, endpoint: endpoint, peers: peers}, nil
}

// Close releases the connection.
func (c *Cluster) Close() error { return c.client.Close() }

// peerClient speaks to members' peer URLs as the local member does: with
// its peer certificate, trusting the etcd CA. A single hub (no cluster) has
// none; its only member is local.
func peerClient(dataDir string) (*http.Client, error) {
	certFile, keyFile, caFile := controlplane.EtcdPeerTLS(dataDir)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if _, err := os.Stat(certFile); err == nil {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("load the etcd peer certificate of %s: %w", dataDir, err)
		}
		ca, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("load the etcd CA of %s: %w", dataDir, err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		cfg.Certificates, cfg.RootCAs = []tls.Certificate{cert}, pool
	}
	return &http.Client{Timeout: probeTimeout, Transport: &http.Transport{TLSClientConfig: cfg}}, nil
}

// List returns the members, the local one's view of the leader, and which
// members answer on their peer URLs. It reads the local member's copy of
// the membership, so it answers also while the cluster has no quorum.
func (c *Cluster) List(ctx context.Context) ([]Member, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := c.client.MemberList(ctx, clientv3.WithSerializable())
	if err != nil {
		return nil, fmt.Errorf("list the etcd members through %s: %w", c.endpoint, err)
	}
	status, err := c.client.Status(ctx, c.endpoint)
	if err != nil {
		return nil, fmt.Errorf("ask the local etcd member at %s for its status: %w", c.endpoint, err)
	}
	return toMembers(resp.Members, status.Leader, status.Header.MemberId, c.probe(ctx, resp.Members)), nil
}

// probe asks every member with a peer URL for its version, in parallel, and
// returns the IDs of those that answered.
func (c *Cluster) probe(ctx context.Context, members []*etcdserverpb.Member) map[uint64]bool {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		answers = map[uint64]bool{}
	)
	for _, m := range members {
		for _, u := range m.PeerURLs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(u, "/")+"/version", nil)
				if err != nil {
					return
				}
				resp, err := c.peers.Do(req)
				if err != nil {
					return
				}
				resp.Body.Close()
				mu.Lock()
				answers[m.ID] = true
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	return answers
}

// toMembers converts etcd's member list, sorted by name (members not
// started yet last).
func toMembers(in []*etcdserverpb.Member, leader, local uint64, answers map[uint64]bool) []Member {
	out := make([]Member, 0, len(in))
	for _, m := range in {
		out = append(out, Member{
			Name: m.Name, ID: formatID(m.ID), PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs,
			Started: m.Name != "", Learner: m.IsLearner, Leader: m.ID == leader && leader != 0,
			Answers: answers[m.ID], Local: m.ID == local, id: m.ID,
		})
	}
	slices.SortFunc(out, func(a, b Member) int {
		if (a.Name == "") != (b.Name == "") {
			if a.Name == "" {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name+a.ID, b.Name+b.ID)
	})
	return out
}

func formatID(id uint64) string { return strconv.FormatUint(id, 16) }

// find returns the member named nameOrID, or whose ID it is.
func find(members []Member, nameOrID string) (Member, error) {
	for _, m := range members {
		if m.Name == nameOrID && m.Name != "" {
			return m, nil
		}
	}
	if id, err := strconv.ParseUint(nameOrID, 16, 64); err == nil {
		for _, m := range members {
			if m.id == id {
				return m, nil
			}
		}
	}
	var names []string
	for _, m := range members {
		names = append(names, m.String())
	}
	return Member{}, fmt.Errorf("no etcd member is named or has the ID %q: the members are %s (flotilla-hub member list)", nameOrID, strings.Join(names, ", "))
}

// voters returns the voting members.
func voters(members []Member) []Member {
	var out []Member
	for _, m := range members {
		if !m.Learner {
			out = append(out, m)
		}
	}
	return out
}

// names lists the members for a sentence.
func names(members []Member) string {
	var out []string
	for _, m := range members {
		out = append(out, m.String())
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// quorum is how many of n voting members must agree.
func quorum(n int) int { return n/2 + 1 }

// explain turns the etcd errors of a membership change into what to do.
func explain(err error, what string) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "unhealthy cluster"), strings.Contains(msg, "not enough started members"):
		return fmt.Errorf("etcd refused to %s: %w (etcd changes its membership only while it keeps a majority of voting members connected: start the members that are down, or remove the ones lost for good first; flotilla-hub member list shows which answer)", what, err)
	case strings.Contains(msg, "too many learner members"):
		return fmt.Errorf("etcd refused to %s: %w (a member added earlier has not caught up and been promoted yet: start it, or remove it; flotilla-hub member list shows it as a learner)", what, err)
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(msg, "request timed out"), strings.Contains(msg, "context deadline exceeded"):
		return fmt.Errorf("etcd did not %s within %s: %w (a majority of the voting members must run to commit a change; flotilla-hub member list shows which answer)", what, requestTimeout, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
