package search

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/duration"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/search"
)

type options struct {
	*cmdutil.Globals
	output string
	limit  int
	all    bool
}

// NewCommand returns `flotilla search`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	o := &options{Globals: g}
	cmd := &cobra.Command{
		Use:   "search [QUERY]",
		Short: "Find objects in every managed cluster with one query of the hub's search index",
		Long: `Find objects in every managed cluster you may see, with one query of the
hub's search index (the agents keep it current; a change shows within
seconds).

A query is space-separated terms, all of which must hold:

  kind=Pod              kind (any case), kind=Pod,Job for either, kind!=Secret
  namespace=prod        exact namespace      name=web      exact name
  cluster=cluster1      cluster, or cluster!=cluster3
  image=nginx:1.27      objects one of whose images contains it
  status=CrashLoopBackOff   the one-word status kubectl shows
  owner=ReplicaSet/web-5d4f or owner=web-5d4f   the controller
  group=apps            API group (core for the core group), or group!=apps
  app=web, tier!=db, env=prod,dev   any other key is a label (label:name=x
                        for a label whose key is one of the words above)
  web                   one free word: names that contain it

You see the objects of the clusters that hub RBAC lets you create
managedclusters/proxy or get managedclusters/search on (see docs/search.md).
The same index answers kubectl: flotilla kubeconfig --search.`,
		Example: `  # Every Pod in CrashLoopBackOff, in every cluster
  flotilla search 'kind=Pod status=CrashLoopBackOff'

  # Where does an image run? With images, owners and labels
  flotilla search 'image=nginx:1.25' -o wide

  # Deployments labelled app=web outside cluster3, as JSON, every page
  flotilla search 'kind=Deployment app=web cluster!=cluster3' -o json --all

  # Objects whose name contains "checkout" in namespace shop
  flotilla search 'checkout namespace=shop'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			if o.limit < 0 {
				return fmt.Errorf("--limit %d: give a page size of 1 or more", o.limit)
			}
			return o.run(cmd.Context(), strings.Join(args, " "))
		},
	}
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML)
	cmd.Flags().IntVar(&o.limit, "limit", 0, "objects per page (default: the hub's, 500; at most 5000)")
	cmd.Flags().BoolVar(&o.all, "all", false, "fetch every page, not only the first")
	return cmd
}

func (o *options) run(ctx context.Context, q string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	var result searchv1alpha1.SearchResult
	cont := ""
	for {
		page, err := o.page(ctx, c, q, cont)
		if err != nil {
			return err
		}
		result.TypeMeta = page.TypeMeta
		result.Items = append(result.Items, page.Items...)
		cont = page.Continue
		if !o.all || cont == "" {
			break
		}
	}
	result.Continue = cont
	if result.Items == nil {
		result.Items = []searchv1alpha1.SearchItem{}
	}
	if o.output == cmdutil.OutputJSON || o.output == cmdutil.OutputYAML {
		return cmdutil.PrintData(o.Streams.Out, o.output, result)
	}
	if len(result.Items) == 0 {
		o.Notef("No objects found.")
		return nil
	}
	header, rows := Table(result.Items, o.output == cmdutil.OutputWide, time.Now())
	if err := cmdutil.PrintTable(o.Streams.Out, header, rows); err != nil {
		return err
	}
	if cont != "" {
		o.Notef("More objects match: pass --all for every page, or narrow the query.")
	}
	return nil
}

// page fetches one page of the query.
func (o *options) page(ctx context.Context, c *cmdutil.Clients, q, cont string) (*searchv1alpha1.SearchResult, error) {
	req := c.Kube.Discovery().RESTClient().Get().AbsPath(search.SearchPath).Param("q", q)
	if o.limit > 0 {
		req = req.Param("limit", strconv.Itoa(o.limit))
	}
	if cont != "" {
		req = req.Param("continue", cont)
	}
	res := req.Do(ctx)
	// Error, not Raw's error, decodes the hub's Status.
	raw, err := res.Raw()
	if err != nil {
		err = res.Error()
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s does not serve search: its index is off (flotilla-hub --search-database off) or the hub runs on an existing cluster (--kubeconfig); see docs/search.md", c.Where)
		}
		if status, ok := err.(apierrors.APIStatus); ok && status.Status().Message != "" {
			// The hub's message names the term and how to fix it.
			return nil, fmt.Errorf("%s", status.Status().Message)
		}
		return nil, cmdutil.Explain(err, c.Where, "search")
	}
	var page searchv1alpha1.SearchResult
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, fmt.Errorf("%s answered the search with something else than a SearchResult: %w", c.Where, err)
	}
	return &page, nil
}

// Table is the text output's header and rows: CLUSTER NAMESPACE NAME KIND
// STATUS AGE, and IMAGES OWNER LABELS when wide.
func Table(items []searchv1alpha1.SearchItem, wide bool, now time.Time) ([]string, [][]string) {
	header := []string{"CLUSTER", "NAMESPACE", "NAME", "KIND", "STATUS", "AGE"}
	if wide {
		header = append(header, "IMAGES", "OWNER", "LABELS")
	}
	rows := make([][]string, 0, len(items))
	for _, it := range items {
		row := []string{it.Cluster, orDash(it.Namespace), it.Name, it.Kind, orDash(it.Status), age(it.CreationTimestamp.Time, now)}
		if wide {
			row = append(row, orDash(strings.Join(it.Images, ",")), orDash(owner(it.Owner)), orDash(labelString(it.Labels)))
		}
		rows = append(rows, row)
	}
	return header, rows
}

func labelString(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func age(created, now time.Time) string {
	if created.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(created))
}

func owner(o *searchv1alpha1.Owner) string {
	if o == nil {
		return ""
	}
	return o.Kind + "/" + o.Name
}
