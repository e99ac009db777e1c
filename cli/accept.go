package cli

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

	"github.com/spf13/cobra"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/parallel"
)

// pollInterval is how often waiting commands look again.
const pollInterval = time.Second

// defaultWaitTimeout bounds --wait.
const defaultWaitTimeout = 5 * time.Minute

type acceptOptions struct {
	*globalOptions
	clusters  []string
	wait      bool
	timeout   time.Duration
	skipCheck bool
	// replaceAgent is the agent id --replace-agent names: the new agent
	// that replaces a cluster's accepted one.
	replaceAgent string
	// ignored holds the names of the refused CSRs already reported as
	// ignored, so that --wait says so once.
	ignored sync.Map
	// watch holds the hub's CSRs and ManagedClusters when --wait waits
	// for more than a few clusters; nil otherwise.
	watch *acceptWatch
}

func newAcceptCommand(g *globalOptions) *cobra.Command {
	o := &acceptOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "accept --clusters NAME[,NAME...]",
		Short: "Accept clusters that asked to join: approve their CSRs and set hubAcceptsClient",
		Long: `Accept managed clusters whose agents asked to join the hub.

For each cluster it approves the pending certificate signing requests
labelled open-cluster-management.io/cluster-name=<cluster>, and sets
spec.hubAcceptsClient on its ManagedCluster. The hub then creates the
cluster's namespace and RBAC, and signs the approved CSRs; the agent stores
its new credentials and the cluster joins.

A CSR is approved only if a join identity requested it (a bootstrap token
in group system:bootstrappers:managedcluster, or OCM's bootstrap service
account agent-registration-bootstrap or cluster-bootstrap), and it asks for exactly an agent's client certificate for
that cluster: signer kubernetes.io/kube-apiserver-client, subject
CN=system:open-cluster-management:<cluster>:<agent-id> with
O=system:open-cluster-management:<cluster> (and, optionally,
system:open-cluster-management:managed-clusters). Any other pending CSR for
the cluster is refused. When the cluster has a CSR that passes the checks,
the refused ones (someone spoofing the cluster's name) are ignored, and the
command says so, naming each with who requested it; when it has none, the
command approves and accepts nothing for that cluster, and fails, naming
the CSRs and what is wrong with them.
--skip-approve-check approves whatever is pending for the cluster: use it
only for CSRs you have inspected.

A cluster that already has an accepted agent is never given another by a
plain accept: whoever holds a join token (and every joined cluster keeps
one until its agent removes it) can ask for any cluster's name. accept
refuses such a CSR, naming the cluster's agent and who asked, even with
--skip-approve-check. When the cluster's agent really is replaced (it lost
its certificate, or the cluster was rebuilt), check who asked, then name the
new agent with --replace-agent: accept records it as the cluster's agent
and approves its CSR, and the hub gives the cluster's access to it alone,
so the old agent's certificate is refused from then on.

Without --wait the cluster must already have asked (run join first). With
--wait, accept waits until the ManagedCluster and a CSR exist, accepts, and
then waits until the hub has accepted the cluster and its agent has joined.`,
		Example: `  # Accept one cluster.
  flotilla accept --clusters cluster1

  # Accept two, waiting up to 10 minutes for them to ask and to join.
  flotilla accept --clusters cluster1,cluster2 --wait --timeout 10m

  # Replace the agent of cluster1, after checking that the new one asked.
  kubectl get csr -l open-cluster-management.io/cluster-name=cluster1
  flotilla accept --clusters cluster1 --replace-agent x7k2pqz9ab

  # Approve a CSR that the checks refused, after inspecting it.
  kubectl get csr -l open-cluster-management.io/cluster-name=cluster1 -o yaml
  flotilla accept --clusters cluster1 --skip-approve-check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.clusters = cleanClusterList(o.clusters)
			if err := validateClusterList(o.clusters); err != nil {
				return err
			}
			if o.replaceAgent != "" && len(o.clusters) != 1 {
				return fmt.Errorf("--replace-agent names the new agent of one cluster: give exactly one with --clusters, not %d", len(o.clusters))
			}
			if o.timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.timeout)
			}
			return o.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.clusters, "clusters", nil, "names of the clusters to accept, comma separated")
	f.BoolVar(&o.wait, "wait", false, "wait until each cluster has asked to join, then until it has joined")
	f.DurationVar(&o.timeout, "timeout", defaultWaitTimeout, "how long --wait waits in all")
	f.BoolVar(&o.skipCheck, "skip-approve-check", false, "approve every pending CSR of the clusters, even those that fail the checks")
	f.StringVar(&o.replaceAgent, "replace-agent", "", "the agent id of a cluster's new agent, which replaces its accepted agent (whose certificate is then refused)")
	aliasClusterFlag(g, cmd)
	return cmd
}

// cleanClusterList trims and de-duplicates --clusters, keeping the order.
func cleanClusterList(names []string) []string {
	var out []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// validateClusterList checks --clusters before anything is sent anywhere.
func validateClusterList(names []string) error {
	if len(names) == 0 {
		return errors.New("--clusters is required: name the clusters, e.g. --clusters cluster1,cluster2")
	}
	for _, n := range names {
		if err := validateClusterName(n); err != nil {
			return fmt.Errorf("--clusters: %w", err)
		}
	}
	return nil
}

// validateClusterName requires a DNS-1123 label, as namespaces are: each
// cluster gets a hub namespace of its own name.
func validateClusterName(name string) error {
	if name == "" {
		return errors.New("the cluster name is empty")
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid cluster name: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

func (o *acceptOptions) run(ctx context.Context) error {
	c, err := o.clientsFor(hubSide, func(cfg *rest.Config) {
		if len(o.clusters) > 1 {
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
	if o.wait {
		return o.acceptAllAndWait(ctx, c)
	}
	var errs []error
	for _, name := range o.clusters {
		pass, err := o.acceptOnce(ctx, c, name)
		if err == nil {
			err = pass.verdict()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// acceptAllAndWait accepts every cluster as soon as it has asked, and
// waits until all have joined. For more than a few clusters it lists the
// hub's cluster CSRs and ManagedClusters once and then follows their
// watches (acceptWatch); each round works from that copy on the clusters
// not done yet, side by side: accepting a fleet costs the hub two lists,
// the watch events and the writes, however long it takes, and takes about
// as long as its slowest agent, not the sum of them.
func (o *acceptOptions) acceptAllAndWait(ctx context.Context, c *clients) error {
	deadline := time.Now().Add(o.timeout)
	out := &lockedWriter{w: o.streams.ErrOut}
	type waiting struct {
		prog *progress
		last acceptPass
	}
	pending := make(map[string]*waiting, len(o.clusters))
	for _, name := range o.clusters {
		pending[name] = &waiting{prog: newProgress(out), last: acceptPass{name: name}}
	}
	errs := map[string]error{}
	if len(o.clusters) > fewClusters {
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
	hubProg := newProgress(out)
	var (
		lastRoundErr error
		sawDown      bool
	)
	retry := func(err error) (bool, error) {
		if errors.Is(err, errNotListedYet) {
			hubProg.report("Waiting for %s to answer the first lists of CSRs and ManagedClusters", c.where)
			return false, nil
		}
		if sawDown && hubStarting(err) {
			lastRoundErr = err
			hubProg.report("Waiting for %s to serve the hub's APIs again: %v", c.where, startingReason(err))
			return false, nil
		}
		if !retryable(err) {
			return false, err
		}
		lastRoundErr = err
		if hubDown(err) {
			sawDown = true
			hubProg.report("Waiting for %s to answer again: %v", c.where, err)
		} else {
			hubProg.report("The hub did not answer in time; trying again: %v", err)
		}
		return false, nil
	}
	err := pollUntil(ctx, deadline, func(ctx context.Context) (bool, error) {
		names := slices.Sorted(maps.Keys(pending))
		snap, err := o.readSnapshot(ctx, c, names)
		if err != nil {
			return retry(err)
		}
		passes := make([]acceptPass, len(names))
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
				w.prog.wait("Waiting for cluster "+name, missing[0])
				continue
			}
			w.prog.report("Cluster %s is accepted and joined.", name)
			delete(pending, name)
		}
		if roundErr != nil {
			return retry(roundErr)
		}
		return len(pending) == 0, nil
	})
	if err != nil && !errors.Is(err, errTimedOut) {
		return err
	}
	var all []error
	if len(pending) > 0 && lastRoundErr != nil {
		all = append(all, fmt.Errorf("the hub's last failure: %w", lastRoundErr))
	}
	for _, name := range o.clusters {
		if w, ok := pending[name]; ok {
			all = append(all, fmt.Errorf("timed out after --timeout %s waiting for cluster %s: %s", o.timeout, name, strings.Join(w.last.missing(), "; ")))
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
func (o *acceptOptions) readSnapshot(ctx context.Context, c *clients, names []string) (*acceptSnapshot, error) {
	if o.watch == nil {
		return readAcceptSnapshot(ctx, c, names)
	}
	snap, err := o.watch.snapshot(names)
	if err != nil && !errors.Is(err, errNotListedYet) {
		return nil, explain(err, c.where, "list and watch the clusters' CSRs and ManagedClusters")
	}
	return snap, err
}

// readAcceptSnapshot reads the CSRs and ManagedClusters of names one by
// one.
func readAcceptSnapshot(ctx context.Context, c *clients, names []string) (*acceptSnapshot, error) {
	snap := &acceptSnapshot{csrs: map[string][]certificatesv1.CertificateSigningRequest{}, clusters: map[string]*clusterv1.ManagedCluster{}}
	for _, name := range names {
		csrs, err := c.kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
			LabelSelector: labels.Set{clusterv1.ClusterNameLabel: name}.String(),
		})
		if err != nil {
			return nil, explain(err, c.where, "list the CSRs of cluster "+name)
		}
		snap.csrs[name] = csrs.Items
		mc := &clusterv1.ManagedCluster{}
		switch err := c.ctrl.Get(ctx, client.ObjectKey{Name: name}, mc); {
		case err == nil:
			snap.clusters[name] = mc
		case !apierrors.IsNotFound(err):
			return nil, explainClusterAPI(err, c, "get ManagedCluster "+name)
		}
	}
	return snap, nil
}

// acceptPass is what one pass over a cluster found and did.
type acceptPass struct {
	name    string
	cluster *clusterv1.ManagedCluster // nil while it does not exist
	csrs    int                       // CSRs labelled for the cluster, in any state
	// approved counts the CSRs approved in this pass.
	approved int
	refused  []string
	// replaced are join CSRs of a cluster that already has an agent,
	// current (by id; "" when not recorded).
	replaced []replacement
	current  string
	// skipCheck records whether --skip-approve-check was given, for messages.
	skipCheck bool
}

// acceptOnce approves the cluster's acceptable pending CSRs and sets
// hubAcceptsClient if the ManagedCluster exists.
func (o *acceptOptions) acceptOnce(ctx context.Context, c *clients, name string) (acceptPass, error) {
	snap, err := readAcceptSnapshot(ctx, c, []string{name})
	if err != nil {
		return acceptPass{name: name}, err
	}
	return o.acceptFrom(ctx, c, name, snap.csrs[name], snap.clusters[name])
}

// acceptFrom approves, of csrs (the cluster's, in any state), the
// acceptable pending ones, and sets hubAcceptsClient on mc unless it is
// nil (not there yet).
func (o *acceptOptions) acceptFrom(ctx context.Context, c *clients, name string, csrs []certificatesv1.CertificateSigningRequest, mc *clusterv1.ManagedCluster) (acceptPass, error) {
	pass := acceptPass{name: name, skipCheck: o.skipCheck, csrs: len(csrs)}
	var approvable, refused []*certificatesv1.CertificateSigningRequest
	var held bool
	pass.current, held = heldAgent(mc)
	for i := range csrs {
		csr := &csrs[i]
		if csrState(csr) != "pending" || o.watch.wroteHere(csrWrite(csr.Name)) {
			continue
		}
		if !o.skipCheck {
			if err := checkCSR(csr, name); err != nil {
				pass.refused = append(pass.refused, fmt.Sprintf("CSR %s: %v (requested by %s)", csr.Name, err, csr.Spec.Username))
				refused = append(refused, csr)
				continue
			}
		}
		if (held || o.replaceAgent != "") && isBootstrapRequester(csr.Spec.Username, csr.Spec.Groups) {
			r, err := o.checkReplacement(csr, name)
			if err != nil {
				pass.refused = append(pass.refused, fmt.Sprintf("CSR %s: %v (requested by %s)", csr.Name, err, csr.Spec.Username))
				refused = append(refused, csr)
				continue
			}
			if r != nil {
				pass.replaced = append(pass.replaced, *r)
				continue
			}
		}
		approvable = append(approvable, csr)
	}
	// Suspicious CSRs alone stop everything for the cluster, until an
	// administrator has looked. Beside a CSR that passes the checks, they
	// are ignored, and said to be: whoever made them cannot keep the real
	// cluster out by spoofing its name.
	if (len(pass.refused) > 0 || len(pass.replaced) > 0) && len(approvable) == 0 {
		return pass, nil
	}
	for i, csr := range refused {
		if _, seen := o.ignored.LoadOrStore(csr.Name, true); !seen {
			o.notef("Hub: ignored %s, labelled for cluster %s, as the cluster has a CSR that passes the checks", pass.refused[i], name)
		}
	}
	pass.refused = nil
	if o.replaceAgent != "" && mc != nil && len(approvable) > 0 {
		if err := o.recordReplacement(ctx, c, mc); err != nil {
			return pass, err
		}
	}
	for _, csr := range approvable {
		if err := approveCSR(ctx, c, csr); err != nil {
			return pass, err
		}
		o.watch.wrote(csrWrite(csr.Name))
		pass.approved++
		o.notef("Hub: approved CSR %s of cluster %s (requested by %s)", csr.Name, name, csr.Spec.Username)
	}
	if mc == nil {
		return pass, nil
	}
	pass.cluster = mc
	if !mc.Spec.HubAcceptsClient && !o.watch.wroteHere(clusterWrite(mc.UID)) {
		if err := setHubAcceptsClient(ctx, c, mc.DeepCopy(), true); err != nil {
			return pass, err
		}
		o.watch.wrote(clusterWrite(mc.UID))
		o.notef("Hub: set hubAcceptsClient on ManagedCluster %s", name)
	}
	return pass, nil
}

func approveCSR(ctx context.Context, c *clients, csr *certificatesv1.CertificateSigningRequest) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type:           certificatesv1.CertificateApproved,
		Status:         corev1.ConditionTrue,
		Reason:         "FlotillaAccept",
		Message:        "Approved by flotilla accept.",
		LastUpdateTime: metav1.Now(),
	})
	_, err := c.kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	return explain(err, c.where, "approve CSR "+csr.Name)
}

func setHubAcceptsClient(ctx context.Context, c *clients, mc *clusterv1.ManagedCluster, accept bool) error {
	orig := mc.DeepCopy()
	mc.Spec.HubAcceptsClient = accept
	if err := c.ctrl.Patch(ctx, mc, client.MergeFrom(orig)); err != nil {
		return explain(err, c.where, fmt.Sprintf("set spec.hubAcceptsClient=%t on ManagedCluster %s", accept, mc.Name))
	}
	return nil
}

// refusals is the error for refused CSRs, nil when there are none.
func (p acceptPass) refusals() error {
	if len(p.refused) == 0 {
		return p.replacements()
	}
	return errors.Join(fmt.Errorf("refused to approve %d CSR(s) of cluster %s, so nothing was approved or accepted for it:\n  %s\nIf you trust them after inspecting them (kubectl get csr NAME -o yaml), approve them with --skip-approve-check; otherwise delete them (kubectl delete csr NAME)",
		len(p.refused), p.name, strings.Join(p.refused, "\n  ")), p.replacements())
}

// verdict is the result of accept without --wait.
func (p acceptPass) verdict() error {
	if err := p.refusals(); err != nil {
		return err
	}
	if p.cluster == nil {
		return fmt.Errorf("ManagedCluster %s does not exist on the hub: the cluster has not asked to join yet\nRun `flotilla join ... --cluster-name %s` on it first, or accept with --wait to wait for it", p.name, p.name)
	}
	if p.approved == 0 && p.csrs == 0 && !meta.IsStatusConditionTrue(p.cluster.Status.Conditions, clusterv1.ManagedClusterConditionJoined) {
		return fmt.Errorf("cluster %s has no CSR to approve: its agent has not asked for credentials yet\nCheck that the agent runs on the cluster, or accept with --wait to wait for it", p.name)
	}
	return nil
}

// missing lists what cluster still lacks to be joined, first things first.
func (p acceptPass) missing() []string {
	var m []string
	if p.cluster == nil {
		m = append(m, fmt.Sprintf("ManagedCluster %s does not exist yet (has `flotilla join` run on the cluster?)", p.name))
	}
	if p.csrs == 0 {
		m = append(m, "its agent has not created a CSR yet")
	}
	if len(m) > 0 {
		return m
	}
	conds := p.cluster.Status.Conditions
	if !meta.IsStatusConditionTrue(conds, clusterv1.ManagedClusterConditionHubAccepted) {
		m = append(m, fmt.Sprintf("the hub has not set HubAcceptedManagedCluster=True yet (do the hub controllers run? see `flotilla describe cluster %s` and the hub's log)", p.name))
	}
	if !meta.IsStatusConditionTrue(conds, clusterv1.ManagedClusterConditionJoined) {
		m = append(m, fmt.Sprintf("its agent has not joined yet (ManagedClusterJoined is not True: see `flotilla describe cluster %s` and the agent's log on the cluster)", p.name))
	}
	return m
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

func newDenyCommand(g *globalOptions) *cobra.Command {
	var clusters []string
	cmd := &cobra.Command{
		Use:   "deny --clusters NAME[,NAME...]",
		Short: "Stop accepting clusters: clear spec.hubAcceptsClient",
		Long: `Stop accepting managed clusters: set spec.hubAcceptsClient to false on their
ManagedClusters. The hub removes the clusters' RBAC, so their agents can no
longer read their work or report status; the ManagedClusters and their
namespaces stay, and "flotilla accept" takes them back.`,
		Example: `  flotilla deny --clusters cluster1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			clusters = cleanClusterList(clusters)
			if err := validateClusterList(clusters); err != nil {
				return err
			}
			c, err := g.clientsFor(hubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			for _, name := range clusters {
				mc := &clusterv1.ManagedCluster{}
				if err := c.ctrl.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
					if apierrors.IsNotFound(err) {
						return fmt.Errorf("ManagedCluster %s not found on %s (see `flotilla get clusters`)", name, c.where)
					}
					return explainClusterAPI(err, c, "get ManagedCluster "+name)
				}
				if !mc.Spec.HubAcceptsClient {
					g.notef("Hub: ManagedCluster %s was not accepted; nothing to do", name)
					continue
				}
				if err := setHubAcceptsClient(ctx, c, mc, false); err != nil {
					return err
				}
				g.notef("Hub: cleared hubAcceptsClient on ManagedCluster %s", name)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "names of the clusters to deny, comma separated")
	aliasClusterFlag(g, cmd)
	return cmd
}
