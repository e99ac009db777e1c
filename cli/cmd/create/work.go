package create

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

type createWorkOptions struct {
	*cmdutil.Globals
	file      string
	clusters  []string
	overwrite bool
	wait      bool
	timeout   time.Duration
	rs        replicaSetFlags
}

func newCreateWorkCommand(g *cmdutil.Globals) *cobra.Command {
	o := &createWorkOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "work NAME -f FILE (--clusters NAME[,NAME...] | --placement [NAMESPACE/]NAME)",
		Aliases: []string{"works", "manifestwork", "mw"},
		Short:   "Deliver Kubernetes objects to managed clusters: a ManifestWork per cluster, or a ManifestWorkReplicaSet over a Placement",
		Long: `With --clusters, create a ManifestWork named NAME in the hub namespace of
each cluster named; the cluster's agent applies its manifests and reports
their status (see "flotilla get works").

With --placement, create a ManifestWorkReplicaSet named NAME in the
Placement's namespace instead: the hub creates the ManifestWork in every
cluster the Placement chooses, now and as its choice changes, rolling
changes out by --rollout:
  All                  every cluster at once (the default)
  Progressive          --max-concurrency clusters at a time (a number or a
                       percentage; by default the Placement's decision group
                       size)
  ProgressivePerGroup  one decision group of the Placement at a time
A cluster that has not succeeded --progress-deadline after it received the
work counts as failed; a progressive rollout stops once more than
--max-failures clusters failed, and waits --min-success-time after each
step before the next.

The work can differ by cluster: --image CLUSTER=IMAGE runs another image
there (CLUSTER/CONTAINER=IMAGE for one container, CLUSTER=:TAG for another
tag only), and --replicas N --weight CLUSTER=W divides N replicas of every
manifest with spec.replicas across the chosen clusters in proportion to
their weights (clusters not named weigh 1; the parts always add up to N).
Anything more (label selectors, env, JSON patches, min/max replicas) goes
in the spec of a ManifestWorkReplicaSet file: see docs/overrides.md.

-f takes plain Kubernetes manifests, one or many YAML documents (or a v1
List), which become the work's manifests in the order given; or one
ManifestWork, whose spec (and labels and annotations) is used as it is,
while its name and namespace are replaced by NAME and each cluster; or one
ManifestWorkReplicaSet, whose spec is used as it is (--placement, the
rollout flags, --image and --replicas/--weight then change it).

The manifests are checked first, as the hub checks them: each needs
apiVersion, kind and metadata.name, and together they may hold at most
500 KiB of JSON. Every cluster (or the Placement) must exist. An existing
ManifestWork or ManifestWorkReplicaSet of that name is left alone, and
nothing is created, unless --overwrite replaces its spec.

With --wait it then waits until the agent of every cluster reports the
work Applied and Available (with --placement: until the rollout is
complete), printing a line whenever a cluster's state changes; after
--timeout it fails, naming what each cluster still lacks. A rollout that
stops because clusters failed fails the wait at once, and so does a work
whose object another work holds (which the agent does not apply until
that work lets go of it).`,
		Example: `  # Run the objects of app.yaml on two clusters.
  flotilla create work app -f app.yaml --clusters cluster1,cluster2

  # Use a ManifestWork's spec (update strategies, feedback rules...) as is,
  # and wait until both agents report it applied and available.
  flotilla create work hello -f manifestwork-hello.yaml --clusters cluster1,cluster2 --wait

  # Run app.yaml on every cluster Placement apps/web chooses, one cluster at
  # a time, stopping at the first cluster not available within 5 minutes.
  flotilla create work app -f app.yaml --placement apps/web \
      --rollout Progressive --max-concurrency 1 --progress-deadline 5m --wait

  # Run 3 replicas in all, 2 on cluster1 and 1 on the other chosen cluster,
  # and pull the image from the EU registry on cluster2.
  flotilla create work hello -f hello.yaml --placement apps/web \
      --replicas 3 --weight cluster1=2 --image cluster2=registry.eu.example.com/hello:1.4

  # Change the tag of container "app" on cluster3 of an existing replica set.
  flotilla create work app -f app.yaml --placement apps/web --image cluster3/app=:1.5 --overwrite

  # Replace the manifests of an existing work, from standard input.
  kubectl create configmap settings --from-literal=mode=fast --dry-run=client -o yaml |
    flotilla create work settings -f - --clusters cluster1 --overwrite`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name the work: flotilla create work NAME -f FILE (--clusters NAME[,NAME...] | --placement [NAMESPACE/]NAME) (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if o.timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.timeout)
			}
			o.rs.changed = func(n string) bool { return cmd.Flags().Changed(n) }
			if o.rs.placement != "" && len(o.clusters) > 0 {
				return errors.New("--clusters and --placement exclude each other: --clusters creates a ManifestWork in each cluster named, --placement a ManifestWorkReplicaSet whose Placement chooses the clusters; give one of them")
			}
			src, err := readWorkSource(o.file, o.Streams.In)
			if err != nil {
				return err
			}
			if o.rs.placement != "" || (src.replicaSet != nil && len(o.clusters) == 0) {
				rs, err := o.rs.replicaSet(name, src, o.NamespaceFlag(""))
				if err != nil {
					return err
				}
				return o.runReplicaSet(cmd.Context(), rs, src)
			}
			if src.replicaSet != nil {
				return fmt.Errorf("-f %s holds a ManifestWorkReplicaSet, which goes to the clusters of a Placement: use --placement instead of --clusters", o.file)
			}
			if used := o.rs.used(append([]string{"namespace"}, replicaSetOnlyFlags...)); len(used) > 0 {
				return fmt.Errorf("%s only apply to a ManifestWorkReplicaSet: add --placement [NAMESPACE/]NAME instead of --clusters", strings.Join(used, ", "))
			}
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				return fmt.Errorf("%q is not a valid ManifestWork name: %s", name, strings.Join(errs, "; "))
			}
			o.clusters = cmdutil.CleanClusterList(o.clusters)
			if len(o.clusters) == 0 {
				return errors.New("--clusters or --placement is required: name the clusters (--clusters cluster1,cluster2), or a Placement that chooses them (--placement NAMESPACE/NAME)")
			}
			if err := cmdutil.ValidateClusterList(o.clusters); err != nil {
				return err
			}
			return o.run(cmd.Context(), name, src)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "filename", "f", "", "file of Kubernetes manifests, of one ManifestWork or of one ManifestWorkReplicaSet; - reads standard input")
	cmdutil.AddClustersFlag(g, cmd, &o.clusters, "names of the clusters to deliver the work to, comma separated")
	o.rs.addFlags(cmd)
	f.BoolVar(&o.overwrite, "overwrite", false, "replace the spec of a ManifestWork (or ManifestWorkReplicaSet) of that name where one exists")
	f.BoolVar(&o.wait, "wait", false, "wait until every cluster's agent reports the work Applied and Available (with --placement: until the rollout is complete)")
	f.DurationVar(&o.timeout, "timeout", cmdutil.DefaultWaitTimeout, "how long --wait waits in all")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

func (o *createWorkOptions) run(ctx context.Context, name string, src *workSource) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	// Everything is checked before anything is written, so that a typo in
	// one cluster name does not leave the work on half of the clusters.
	existing, err := o.check(ctx, c, name)
	if err != nil {
		return err
	}
	for _, cluster := range o.clusters {
		verb := "created"
		if old := existing[cluster]; old != nil {
			err = replaceWork(ctx, c, old, src)
			verb = "replaced"
		} else {
			err = createWork(ctx, c, cluster, name, src)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Streams.Out, "ManifestWork %s %s in cluster %s (%s)\n", name, verb, cluster, cmdutil.Plural(len(src.spec.Workload.Manifests), "manifest"))
	}
	if o.wait {
		return o.waitReady(ctx, c, name)
	}
	if len(o.clusters) == 1 {
		o.Notef("Follow it with: %s get works --clusters %s %s", cmdutil.Self(), o.clusters[0], name)
	} else {
		o.Notef("Follow it with: %s get works %s", cmdutil.Self(), name)
	}
	return nil
}

// check makes sure every cluster exists and is accepted, and returns the
// existing works of that name by cluster; without --overwrite any is an error.
func (o *createWorkOptions) check(ctx context.Context, c *cmdutil.Clients, name string) (map[string]*workv1.ManifestWork, error) {
	var problems []string
	existing := map[string]*workv1.ManifestWork{}
	for _, cluster := range o.clusters {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			if apierrors.IsNotFound(err) {
				problems = append(problems, fmt.Sprintf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names)", cluster))
				continue
			}
			return nil, cmdutil.ExplainClusterAPI(err, c, "get ManagedCluster "+cluster)
		}
		if !mc.Spec.HubAcceptsClient {
			problems = append(problems, fmt.Sprintf("cluster %s is not accepted, so its agent could not read the work: accept it first (flotilla accept --clusters %s)", cluster, cluster))
			continue
		}
		mw := &workv1.ManifestWork{}
		err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, cmdutil.Explain(err, c.Where, fmt.Sprintf("get ManifestWork %s/%s", cluster, name))
		case mw.DeletionTimestamp != nil:
			problems = append(problems, fmt.Sprintf("ManifestWork %s in cluster %s is being deleted: wait until it is gone (flotilla delete work %s --clusters %s --wait), then create it again", name, cluster, name, cluster))
		case !o.overwrite:
			problems = append(problems, fmt.Sprintf("ManifestWork %s already exists in cluster %s: pass --overwrite to replace its spec, or delete it first (flotilla delete work %s --clusters %s)", name, cluster, name, cluster))
		default:
			existing[cluster] = mw
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("nothing was created:\n  %s", strings.Join(problems, "\n  "))
	}
	return existing, nil
}

func createWork(ctx context.Context, c *cmdutil.Clients, cluster, name string, src *workSource) error {
	mw := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name, Labels: maps.Clone(src.labels), Annotations: maps.Clone(src.annotations)},
		Spec:       *src.spec.DeepCopy(),
	}
	err := c.Ctrl.Create(ctx, mw)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("cannot create ManifestWork %s in cluster %s: its namespace %s does not exist yet; the hub creates it once it has accepted the cluster (see `flotilla get clusters %s`)", name, cluster, cluster, cluster)
	}
	return cmdutil.Explain(err, c.Where, fmt.Sprintf("create ManifestWork %s/%s", cluster, name))
}

// replaceWork gives an existing work the new spec, keeping what others
// put in its metadata.
func replaceWork(ctx context.Context, c *cmdutil.Clients, current *workv1.ManifestWork, src *workSource) error {
	key := client.ObjectKeyFromObject(current)
	fresh := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !fresh {
			current = &workv1.ManifestWork{}
			if err := c.Ctrl.Get(ctx, key, current); err != nil {
				return err
			}
		}
		fresh = false
		mw := current.DeepCopy()
		mw.Spec = *src.spec.DeepCopy()
		addMetadata(mw, src.labels, src.annotations)
		return c.Ctrl.Update(ctx, mw)
	})
	return cmdutil.Explain(err, c.Where, "replace ManifestWork "+key.String())
}

// waitReady waits until every cluster reports the work Applied and
// Available, reporting each cluster's state as it changes.
func (o *createWorkOptions) waitReady(ctx context.Context, c *cmdutil.Clients, name string) error {
	deadline := time.Now().Add(o.timeout)
	prog := map[string]*cmdutil.Progress{}
	missing := map[string][]string{}
	generation := map[string]int64{}
	for _, cluster := range o.clusters {
		prog[cluster] = cmdutil.NewProgress(o.Streams.ErrOut)
	}
	hubProg := cmdutil.NewProgress(o.Streams.ErrOut)
	var (
		hubErr  error
		sawDown bool
	)
	err := cmdutil.PollUntil(ctx, deadline, func(ctx context.Context) (bool, error) {
		hubErr = nil
		done := true
		for _, cluster := range o.clusters {
			if m, ok := missing[cluster]; ok && len(m) == 0 {
				continue
			}
			mw := &workv1.ManifestWork{}
			err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw)
			switch {
			case apierrors.IsNotFound(err):
				mw = nil
			case cmdutil.HubDown(err):
				hubErr, sawDown = err, true
				hubProg.Report("Waiting for %s to answer again: %v", c.Where, err)
				return false, nil
			case sawDown && cmdutil.HubStarting(err):
				hubErr = err
				hubProg.Report("Waiting for %s to serve the hub's APIs again: %v", c.Where, err)
				return false, nil
			case err != nil:
				return false, cmdutil.Explain(err, c.Where, fmt.Sprintf("get ManifestWork %s/%s", cluster, name))
			default:
				if _, ok := generation[cluster]; !ok {
					generation[cluster] = mw.Generation
				}
			}
			if held := workview.WorkHeld(mw, generation[cluster]); held != "" {
				return false, fmt.Errorf("ManifestWork %s in cluster %s is not applied: %s\nSee its status with: %s get works --clusters %s %s -o wide", name, cluster, held, cmdutil.Self(), cluster, name)
			}
			m := workview.WorkMissing(mw, generation[cluster])
			missing[cluster] = m
			if len(m) == 0 {
				prog[cluster].Report("ManifestWork %s is applied and available in cluster %s.", name, cluster)
				continue
			}
			done = false
			prog[cluster].Wait(fmt.Sprintf("Waiting for ManifestWork %s in cluster %s", name, cluster), m[0])
		}
		return done, nil
	})
	if errors.Is(err, cmdutil.ErrTimedOut) {
		var lacks []string
		for _, cluster := range o.clusters {
			if m := missing[cluster]; len(m) > 0 {
				lacks = append(lacks, fmt.Sprintf("cluster %s: %s", cluster, strings.Join(m, "; ")))
			}
		}
		if hubErr != nil {
			return cmdutil.Explain(hubErr, c.Where, fmt.Sprintf("timed out after --timeout %s waiting for the hub to answer again, to read ManifestWork %s", o.timeout, name))
		}
		return fmt.Errorf("timed out after --timeout %s waiting for ManifestWork %s:\n  %s\nSee its status with: %s get works %s -o wide", o.timeout, name, strings.Join(lacks, "\n  "), cmdutil.Self(), name)
	}
	if err != nil {
		return err
	}
	o.Notef("Show it with: %s get works %s", cmdutil.Self(), name)
	return nil
}

// addMetadata adds labels and annotations to obj's, replacing the values
// of keys it has: what --overwrite keeps of an object it replaces.
func addMetadata(obj metav1.Object, labels, annotations map[string]string) {
	obj.SetLabels(withAll(obj.GetLabels(), labels))
	obj.SetAnnotations(withAll(obj.GetAnnotations(), annotations))
}

// withAll is m with every key of add set to add's value; m itself when
// add is empty.
func withAll(m, add map[string]string) map[string]string {
	if len(add) == 0 {
		return m
	}
	if m == nil {
		m = make(map[string]string, len(add))
	}
	maps.Copy(m, add)
	return m
}
