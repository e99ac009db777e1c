package handshake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/parallel"
)

// AcceptOptions are the flags of `flotilla accept`, and what accepting
// clusters needs: dev up and the console accept with them too.
type AcceptOptions struct {
	*cmdutil.Globals
	Clusters  []string
	Wait      bool
	Timeout   time.Duration
	SkipCheck bool
	// ReplaceAgent is the agent id --replace-agent names: the new agent
	// that replaces a cluster's accepted one.
	ReplaceAgent string
	// ignored holds the names of the refused CSRs already reported as
	// ignored, so that --wait says so once.
	ignored sync.Map
	// watch holds the hub's CSRs and ManagedClusters when --wait waits
	// for more than a few clusters; nil otherwise.
	watch *acceptWatch
}

// Run accepts o.Clusters, and with o.Wait waits until they have joined.
func (o *AcceptOptions) Run(ctx context.Context) error {
	c, err := o.ClientsFor(cmdutil.HubSide, func(cfg *rest.Config) {
		if len(o.Clusters) > 1 {
			// Accepting is two writes per cluster, at most
			// acceptParallelism at once: the hub's answers (and its
			// priority and fairness) set the pace, not the CLI's 50
			// requests a second, which alone made accepting 5,000
			// clusters take over 200 s.
			cfg.QPS = -1
		}
	})
	if err != nil {
		return err
	}
	if o.Wait {
		return o.AcceptAllAndWait(ctx, c)
	}
	var errs []error
	for _, name := range o.Clusters {
		pass, err := o.AcceptOnce(ctx, c, name)
		if err == nil {
			err = pass.Verdict()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// AcceptAllAndWait accepts every cluster as soon as it has asked, and
// waits until all have joined. For more than a few clusters it lists the
// hub's cluster CSRs and ManagedClusters once and then follows their
// watches (acceptWatch); each round works from that copy on the clusters
// not done yet, side by side: accepting a fleet costs the hub two lists,
// the watch events and the writes, however long it takes, and takes about
// as long as its slowest agent, not the sum of them.
func (o *AcceptOptions) AcceptAllAndWait(ctx context.Context, c *cmdutil.Clients) error {
	deadline := time.Now().Add(o.Timeout)
	out := &lockedWriter{w: o.Streams.ErrOut}
	type waiting struct {
		prog *cmdutil.Progress
		last AcceptPass
	}
	pending := make(map[string]*waiting, len(o.Clusters))
	for _, name := range o.Clusters {
		pending[name] = &waiting{prog: cmdutil.NewProgress(out), last: AcceptPass{name: name}}
	}
	errs := map[string]error{}
	if len(o.Clusters) > fewClusters {
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		var err error
		if o.watch, err = startAcceptWatch(watchCtx, c); err != nil {
			return err
		}
	}
	// A hub too busy to answer in time (a fleet joining at once) is no
	// reason to give up on the fleet: such a round is skipped, said, and
	// tried again until the deadline.
	hubProg := cmdutil.NewProgress(out)
	var (
		lastRoundErr error
		sawDown      bool
	)
	retry := func(err error) (bool, error) {
		if errors.Is(err, errNotListedYet) {
			hubProg.Report("Waiting for %s to answer the first lists of CSRs and ManagedClusters", c.Where)
			return false, nil
		}
		if sawDown && cmdutil.HubStarting(err) {
			lastRoundErr = err
			hubProg.Report("Waiting for %s to serve the hub's APIs again: %v", c.Where, cmdutil.StartingReason(err))
			return false, nil
		}
		if !retryable(err) {
			return false, err
		}
		lastRoundErr = err
		if cmdutil.HubDown(err) {
			sawDown = true
			hubProg.Report("Waiting for %s to answer again: %v", c.Where, err)
		} else {
			hubProg.Report("The hub did not answer in time; trying again: %v", err)
		}
		return false, nil
	}
	err := cmdutil.PollUntil(ctx, deadline, func(ctx context.Context) (bool, error) {
		names := slices.Sorted(maps.Keys(pending))
		snap, err := o.readSnapshot(ctx, c, names)
		if err != nil {
			return retry(err)
		}
		passes := make([]AcceptPass, len(names))
		jobs := make([]func(context.Context) error, len(names))
		for i, name := range names {
			jobs[i] = func(ctx context.Context) (err error) {
				passes[i], err = o.acceptFrom(ctx, c, name, snap.csrs[name], snap.clusters[name])
				return err
			}
		}
		var roundErr error
		for i, err := range parallel.Run(ctx, acceptParallelism, jobs) {
			if err != nil {
				roundErr = errors.Join(roundErr, err)
				continue
			}
			name, w := names[i], pending[names[i]]
			if err := passes[i].refusals(); err != nil {
				errs[name] = err
				delete(pending, name)
				continue
			}
			w.last = passes[i]
			if missing := passes[i].missing(); len(missing) > 0 {
				w.prog.Wait("Waiting for cluster "+name, missing[0])
				continue
			}
			w.prog.Report("Cluster %s is accepted and joined.", name)
			delete(pending, name)
		}
		if roundErr != nil {
			return retry(roundErr)
		}
		return len(pending) == 0, nil
	})
	if err != nil && !errors.Is(err, cmdutil.ErrTimedOut) {
		return err
	}
	var all []error
	if len(pending) > 0 && lastRoundErr != nil {
		all = append(all, fmt.Errorf("the hub's last failure: %w", lastRoundErr))
	}
	for _, name := range o.Clusters {
		if w, ok := pending[name]; ok {
			all = append(all, fmt.Errorf("timed out after --timeout %s waiting for cluster %s: %s", o.Timeout, name, strings.Join(w.last.missing(), "; ")))
		}
		all = append(all, errs[name])
	}
	return errors.Join(all...)
}

// retryable says whether a failed read or write may succeed if tried
// again: the hub was slow, overloaded or briefly unreachable. Refusals
// (forbidden, invalid, a missing API) would fail again the same way.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsConflict(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServiceUnavailable(err) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err)
}

// acceptSnapshot is the hub's CSRs and ManagedClusters, by cluster name.
type acceptSnapshot struct {
	csrs     map[string][]certificatesv1.CertificateSigningRequest
	clusters map[string]*clusterv1.ManagedCluster
}

// fewClusters is up to how many clusters accept --wait reads cluster by
// cluster each round rather than watch the whole hub's.
const fewClusters = 8

// readSnapshot is a round's view of names: from the watches when --wait
// waits for a fleet, else read from the hub.
func (o *AcceptOptions) readSnapshot(ctx context.Context, c *cmdutil.Clients, names []string) (*acceptSnapshot, error) {
	if o.watch == nil {
		return readAcceptSnapshot(ctx, c, names)
	}
	snap, err := o.watch.snapshot(names)
	if err != nil && !errors.Is(err, errNotListedYet) {
		return nil, cmdutil.Explain(err, c.Where, "list and watch the clusters' CSRs and ManagedClusters")
	}
	return snap, err
}

// readAcceptSnapshot reads the CSRs and ManagedClusters of names one by
// one.
func readAcceptSnapshot(ctx context.Context, c *cmdutil.Clients, names []string) (*acceptSnapshot, error) {
	snap := &acceptSnapshot{csrs: map[string][]certificatesv1.CertificateSigningRequest{}, clusters: map[string]*clusterv1.ManagedCluster{}}
	for _, name := range names {
		csrs, err := c.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
			LabelSelector: labels.Set{clusterv1.ClusterNameLabel: name}.String(),
		})
		if err != nil {
			return nil, cmdutil.Explain(err, c.Where, "list the CSRs of cluster "+name)
		}
		snap.csrs[name] = csrs.Items
		mc := &clusterv1.ManagedCluster{}
		switch err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, mc); {
		case err == nil:
			snap.clusters[name] = mc
		case !apierrors.IsNotFound(err):
			return nil, cmdutil.ExplainClusterAPI(err, c, "get ManagedCluster "+name)
		}
	}
	return snap, nil
}

// AcceptOnce approves the cluster's acceptable pending CSRs and sets
// hubAcceptsClient if the ManagedCluster exists.
func (o *AcceptOptions) AcceptOnce(ctx context.Context, c *cmdutil.Clients, name string) (AcceptPass, error) {
	snap, err := readAcceptSnapshot(ctx, c, []string{name})
	if err != nil {
		return AcceptPass{name: name}, err
	}
	return o.acceptFrom(ctx, c, name, snap.csrs[name], snap.clusters[name])
}

// acceptParallelism bounds how many clusters accept --wait writes to at once.
const acceptParallelism = 32

// lockedWriter serialises the progress lines of concurrent waits.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
