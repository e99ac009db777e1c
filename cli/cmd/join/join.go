package join

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/agent/registration"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
	"github.com/flotilla-io/flotilla/internal/addon"
)

type joinOptions struct {
	*cmdutil.Globals
	hubToken     string
	hubAPIServer string
	// hubServers are --hub-server as given; servers, the host:port they
	// name, for the agent's --hub-server.
	hubServers  []string
	servers     []string
	clusterName string
	caFile      string
	wait        bool
	run         bool
	image       string
	timeout     time.Duration
	// leaseDuration is spec.leaseDurationSeconds of the ManagedCluster the agent creates.
	leaseDuration int32
	// imageSet records whether --image was given.
	imageSet bool
	// certExpiration is the hub client certificate lifetime the agent asks for.
	certExpiration time.Duration
	// dryRun prints what join would install instead, in output.
	dryRun bool
	output string
}

// NewCommand returns `flotilla join`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	o := &joinOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "join --hub-token TOKEN --hub-apiserver URL --cluster-name NAME",
		Short: "Join this cluster to a hub: install the agent with a join token",
		Long: `Join the cluster of --kubeconfig to a Flotilla hub.

join first checks everything it can without changing anything: the cluster
name, that the hub is reachable, the hub's CA and that the hub accepts the
join token. Without --ca-file, the CA comes from the hub's public
kube-public/cluster-info and is trusted only if the hub signed it with the
join token. Then, on this cluster, it creates the namespace
open-cluster-management-agent and the Secret bootstrap-hub-kubeconfig
(key "kubeconfig") holding the hub address, CA and token, and installs the
agent as the Deployment open-cluster-management-agent/flotilla-agent (--image).

For a hub of several members or processes (docs/ha.md), --hub-server lists
the other members' addresses: the agent dials them in turn when the address
it uses does not answer, keeping the --hub-apiserver host as the name it
verifies, so every member's serving certificate must name that host.

The agent's ServiceAccount may read nodes and namespaces, manage ClusterClaims,
AppliedManifestWorks and ConfigurationPolicies, and its own secrets and
leases. Because it applies whatever the hub's ManifestWorks hold, it is also
bound to cluster-admin (ClusterRoleBinding
open-cluster-management:flotilla-agent:execution): whoever may write
ManifestWorks in this cluster's hub namespace administers this cluster.

The objects are those of the flotilla-agent Helm chart (deploy/charts) for
the same values; --dry-run prints them, bootstrap Secret included, instead
of installing them, without access to the cluster (for a GitOps repository).

With --run the agent runs in the foreground of this command instead, with the
credentials of --kubeconfig, until interrupted.

The agent then asks the hub to join; finish on the hub with
"flotilla accept --clusters <name>". With --wait, join waits until the agent
holds its own hub credentials (Secret hub-kubeconfig-secret).`,
		Example: `  # Paste the command printed by "flotilla init" on the hub:
  flotilla join --hub-token abcdef.0123456789abcdef \
      --hub-apiserver https://hub.example.com:6443 --cluster-name cluster1

  # The same against a named kubeconfig, and wait until the hub accepted it.
  flotilla join --kubeconfig cluster1.kubeconfig --hub-token abcdef.0123456789abcdef \
      --hub-apiserver https://hub.example.com:6443 --cluster-name cluster1 --wait

  # A hub of several members (docs/ha.md): join through one, and let the agent
  # fail over to the others (every member's certificate names hub-1.example.com).
  flotilla join --hub-token abcdef.0123456789abcdef --cluster-name cluster1 \
      --hub-apiserver https://hub-1.example.com:6443 --hub-server 192.0.2.12:6443,192.0.2.13:6443

  # Trust the hub's CA from a file instead of the hub's signed cluster-info.
  flotilla join ... --ca-file hub-ca.crt

  # Write what join installs into a GitOps repository instead of installing it.
  flotilla join ... --dry-run -o yaml > clusters/cluster1/flotilla-agent.yaml

  # Run the agent here, in the foreground (for development).
  flotilla join ... --run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.imageSet = cmd.Flags().Changed("image")
			tok, err := o.validate()
			if err != nil {
				return err
			}
			return o.runJoin(cmd.Context(), tok)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.hubToken, "hub-token", "", "join token printed by \"flotilla init\" or \"flotilla get token\" on the hub")
	f.StringVar(&o.hubAPIServer, "hub-apiserver", "", "address of the hub's API server, e.g. https://hub.example.com:6443")
	f.StringSliceVar(&o.hubServers, "hub-server", nil, "further addresses (host:port) of the hub's API server, for a hub of several members: the agent fails over to them when --hub-apiserver does not answer; repeatable or comma separated")
	f.StringVar(&o.clusterName, "cluster-name", "", "name of this cluster on the hub: a DNS-1123 label, unique on the hub")
	f.StringVar(&o.caFile, "ca-file", "", "PEM file with the hub's CA certificate (default: learn it from the hub, verified with the token)")
	f.BoolVar(&o.wait, "wait", false, "wait until the agent holds its own hub credentials, i.e. the hub accepted the cluster")
	f.DurationVar(&o.timeout, "timeout", cmdutil.DefaultWaitTimeout, "how long --wait waits")
	f.BoolVar(&o.run, "run", false, "run the agent in the foreground instead of installing it")
	f.DurationVar(&o.certExpiration, "client-cert-expiration", agent.DefaultCertificateExpiration,
		"lifetime the agent asks for its hub client certificate (at least 10m; a Flotilla hub signs at most 720h); the agent renews it before it expires")
	f.StringVar(&o.image, "image", handshake.DefaultAgentImage, "agent container image to install")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the objects join would install on the cluster (the flotilla-agent chart's, bootstrap Secret included) instead of installing them; needs no access to the cluster")
	f.StringVarP(&o.output, "output", "o", cmdutil.OutputYAML, "with --dry-run: yaml or json")
	f.Int32Var(&o.leaseDuration, "lease-duration-seconds", 60, "how often the agent renews its lease on the hub (spec.leaseDurationSeconds of the ManagedCluster it creates); the hub marks the cluster unavailable after 5 times as long without renewal")
	return cmd
}

// validate checks the flags before anything is sent anywhere.
func (o *joinOptions) validate() (handshake.BootstrapToken, error) {
	if o.clusterName == "" {
		return handshake.BootstrapToken{}, errors.New("--cluster-name is required: the name this cluster will have on the hub, e.g. --cluster-name cluster1")
	}
	if err := cmdutil.ValidateClusterName(o.clusterName); err != nil {
		return handshake.BootstrapToken{}, fmt.Errorf("--cluster-name: %w", err)
	}
	tok, err := handshake.ParseToken(o.hubToken)
	if err != nil {
		return tok, err
	}
	if o.hubAPIServer == "" {
		return tok, errors.New("--hub-apiserver is required: the hub address printed by `flotilla init`, e.g. https://hub.example.com:6443")
	}
	if _, err := handshake.ParseHubURL(o.hubAPIServer); err != nil {
		return tok, err
	}
	if o.servers, err = handshake.ParseHubServers(o.hubAPIServer, o.hubServers); err != nil {
		return tok, err
	}
	if o.dryRun && (o.run || o.wait) {
		return tok, errors.New("--dry-run prints what join would install: it neither runs (--run) nor waits (--wait)")
	}
	if o.output != cmdutil.OutputYAML && o.output != cmdutil.OutputJSON {
		return tok, fmt.Errorf("--output %q: want yaml or json", o.output)
	}
	if o.run && o.wait {
		return tok, errors.New("--wait waits for an installed agent, but --run runs the agent in the foreground: use one of them")
	}
	if o.run && o.imageSet {
		return tok, errors.New("--image names the agent image to install, but --run runs the agent in this process: use one of them")
	}
	if o.image == "" {
		return tok, errors.New("--image must name the agent container image")
	}
	if o.timeout <= 0 {
		return tok, fmt.Errorf("--timeout %s must be positive", o.timeout)
	}
	if o.certExpiration < agent.MinCertificateExpiration {
		return tok, fmt.Errorf("--client-cert-expiration %s is too short: signers issue no certificate shorter than %s", o.certExpiration, agent.MinCertificateExpiration)
	}
	if o.leaseDuration <= 0 {
		return tok, fmt.Errorf("--lease-duration-seconds %d must be positive", o.leaseDuration)
	}
	return tok, nil
}

func (o *joinOptions) runJoin(ctx context.Context, tok handshake.BootstrapToken) error {
	// Load the cluster's kubeconfig first: a typo there should not wait on
	// the hub. A dry run needs no access to the cluster.
	var spoke *cmdutil.Clients
	if !o.dryRun {
		var err error
		if spoke, err = o.ClientsFor(cmdutil.SpokeSide); err != nil {
			return err
		}
	}
	kubeconfig, err := o.bootstrapKubeconfig(ctx, tok)
	if err != nil {
		if spoke == nil {
			return err
		}
		// An agent that holds usable hub credentials needs no token: it
		// starts, and reconnects, with its certificate; the cluster keeps
		// the bootstrap Secret it has.
		held, heldErr := registration.HeldCredentials(ctx, spoke.Kube, agent.DefaultNamespace, o.clusterName, time.Now())
		if heldErr != nil {
			return fmt.Errorf("%w\nThe agent needs a valid join token, as it holds no usable hub credentials of its own: %v", err, heldErr)
		}
		if held.Hub.Server != strings.TrimSuffix(o.hubAPIServer, "/") && held.Hub.Server != o.hubAPIServer {
			return fmt.Errorf("%w\nThe agent's hub credentials are for hub %s, not %s: they cannot stand in for the token", err, held.Hub.Server, o.hubAPIServer)
		}
		o.Notef("Hub: the join token cannot be used (%s); the agent holds hub credentials for cluster %s (certificate valid until %s) and uses them instead",
			firstLine(err.Error()), o.clusterName, held.Cert.NotAfter.UTC().Format(time.RFC3339))
		kubeconfig = nil
	}
	install := handshake.AgentInstall{Cluster: o.clusterName, Image: o.image, LeaseDurationSeconds: o.leaseDuration, CertExpiration: o.certExpiration, HubServers: o.servers}
	if spoke != nil {
		// A namespace a user made is not join's: unjoin must leave it.
		ns := &corev1.Namespace{}
		err := spoke.Ctrl.Get(ctx, client.ObjectKey{Name: addon.DefaultInstallNamespace}, ns)
		switch {
		case err == nil:
			install.UserAddOnNamespace = !handshake.OwnsAddOnNamespace(ns)
		case !apierrors.IsNotFound(err):
			return cmdutil.Explain(err, spoke.Where, "read Namespace "+addon.DefaultInstallNamespace)
		}
	}
	objs, err := handshake.AgentObjects(install, kubeconfig)
	if err != nil {
		return err
	}
	if o.dryRun {
		return cmdutil.PrintObjects(o.Streams.Out, o.output, objs)
	}
	if o.run {
		// In the foreground only the namespace and the bootstrap Secret.
		var first []client.Object
		for _, obj := range objs {
			if k := obj.GetObjectKind().GroupVersionKind().Kind; k == "Namespace" || k == "Secret" {
				first = append(first, obj)
			}
		}
		if err := handshake.Apply(ctx, spoke, first...); err != nil {
			return err
		}
		o.noteBootstrapWritten(kubeconfig)
		// An agent started again finds the credentials of its first join.
		held := &corev1.Secret{}
		joined := spoke.Ctrl.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: agent.HubKubeconfigSecretName}, held) == nil && len(held.Data["kubeconfig"]) > 0
		return o.runAgent(ctx, joined)
	}
	if err := handshake.Apply(ctx, spoke, objs...); err != nil {
		return err
	}
	o.noteBootstrapWritten(kubeconfig)
	o.Notef("Cluster: installed the agent (Deployment %s/%s, image %s)", agent.DefaultNamespace, handshake.AgentName, o.image)
	fmt.Fprintf(o.Streams.Out, `The agent of cluster %q is installed and will ask the hub to join.
Accept the cluster by running on the hub:

    flotilla accept --clusters %s
`, o.clusterName, o.clusterName)
	if o.wait {
		return o.waitForCredentials(ctx, spoke)
	}
	return nil
}

func (o *joinOptions) noteBootstrapWritten(kubeconfig []byte) {
	if kubeconfig != nil {
		o.Notef("Cluster: wrote Secret %s/%s", agent.DefaultNamespace, agent.BootstrapSecretName)
	}
}

// bootstrapKubeconfig checks the hub and the join token, and makes the
// kubeconfig the agent joins with.
func (o *joinOptions) bootstrapKubeconfig(ctx context.Context, tok handshake.BootstrapToken) ([]byte, error) {
	prog := cmdutil.NewProgress(o.Streams.ErrOut)
	hub := &hubContact{url: o.hubAPIServer, caFile: o.caFile}
	route, err := routeToContainer(ctx, o.hubAPIServer)
	if err != nil {
		return nil, err
	}
	if route != nil {
		hub.route = route
		o.Notef("Hub: %s does not resolve here but names a Docker container: reaching it at %s; the bootstrap kubeconfig keeps %s, which containers on its networks resolve",
			route.container, route, o.hubAPIServer)
	}
	var ca []byte
	if o.caFile != "" {
		if ca, err = readCAFile(o.caFile); err != nil {
			return nil, err
		}
	} else {
		if ca, err = hub.discoverCA(ctx, tok, prog); err != nil {
			return nil, err
		}
		o.Notef("Hub: learned the CA of %s from its cluster-info, signed with token %s", hub.url, tok.ID)
	}
	user, err := hub.checkToken(ctx, ca, tok)
	if err != nil {
		return nil, err
	}
	o.Notef("Hub: %s accepts the join token (user %s)", hub.url, user.Username)
	return BootstrapKubeconfig(hub.url, ca, tok.String())
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
