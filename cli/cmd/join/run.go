package join

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
)

// runAgent runs the agent in this process until ctx ends.
func (o *joinOptions) runAgent(ctx context.Context, joined bool) error {
	path, cleanup, err := o.spokeKubeconfigFile()
	if err != nil {
		return err
	}
	defer cleanup()
	if joined {
		fmt.Fprintf(o.Streams.Out, "Running the agent of cluster %q in the foreground; interrupt it to stop.\nThe cluster holds hub credentials from its earlier join: the agent goes on with them, and logs \"The hub accepted the cluster\" once the hub lets it in.\n", o.clusterName)
	} else {
		fmt.Fprintf(o.Streams.Out, `Running the agent of cluster %q in the foreground; interrupt it to stop.
Accept the cluster by running on the hub:

    flotilla accept --clusters %s
`, o.clusterName, o.clusterName)
	}
	ctrllog.SetLogger(klog.NewKlogr())
	err = agent.Run(ctx, agent.Options{
		ClusterName:           o.clusterName,
		Namespace:             agent.DefaultNamespace,
		SpokeKubeconfig:       path,
		LeaseDurationSeconds:  o.leaseDuration,
		CertificateExpiration: o.certExpiration,
		HubServers:            o.servers,
		MetricsAddr:           "0",
		HealthProbeAddr:       "0",
		Proxy:                 true,
		Search:                true,
	})
	if ctx.Err() != nil {
		return nil // interrupted: a normal way to stop a foreground agent
	}
	if err != nil {
		return fmt.Errorf("the agent stopped: %w", err)
	}
	return nil
}

// spokeKubeconfigFile returns the path of a kubeconfig for the agent with
// the credentials join used: the resolved context, flattened into a private
// temporary file. It returns "" inside a pod without a kubeconfig, where the
// agent uses the in-cluster configuration.
func (o *joinOptions) spokeKubeconfigFile() (string, func(), error) {
	raw, err := o.ClientConfig().RawConfig()
	if err != nil {
		return "", nil, fmt.Errorf("cannot load the managed cluster's kubeconfig from %s: %w", o.KubeconfigSource(), err)
	}
	if len(raw.Contexts) == 0 {
		return "", func() {}, nil
	}
	if o.Context != "" {
		raw.CurrentContext = o.Context
	}
	if err := clientcmdapi.MinifyConfig(&raw); err != nil {
		return "", nil, err
	}
	if err := clientcmdapi.FlattenConfig(&raw); err != nil {
		return "", nil, err
	}
	data, err := clientcmd.Write(raw)
	if err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp("", "flotilla-agent-*.kubeconfig")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.Remove(f.Name()) }
	if _, err := f.Write(data); err != nil {
		f.Close()
		cleanup()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		cleanup()
		return "", nil, err
	}
	return f.Name(), cleanup, nil
}

// waitForCredentials waits until the agent stored its hub kubeconfig.
func (o *joinOptions) waitForCredentials(ctx context.Context, spoke *cmdutil.Clients) error {
	prog := cmdutil.NewProgress(o.Streams.ErrOut)
	missing := "the agent has not started"
	err := cmdutil.PollUntil(ctx, time.Now().Add(o.timeout), func(ctx context.Context) (bool, error) {
		secret := &corev1.Secret{}
		err := spoke.Ctrl.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: agent.HubKubeconfigSecretName}, secret)
		if err == nil && len(secret.Data["kubeconfig"]) > 0 {
			prog.Report("Cluster %s joined: the agent holds its hub credentials (Secret %s/%s).", o.clusterName, agent.DefaultNamespace, agent.HubKubeconfigSecretName)
			return true, nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return false, cmdutil.Explain(err, spoke.Where, "read Secret "+agent.HubKubeconfigSecretName)
		}
		deploy := &appsv1.Deployment{}
		if err := spoke.Ctrl.Get(ctx, client.ObjectKey{Namespace: agent.DefaultNamespace, Name: handshake.AgentName}, deploy); err != nil {
			return false, cmdutil.Explain(err, spoke.Where, "read Deployment "+handshake.AgentName)
		}
		if deploy.Status.AvailableReplicas == 0 {
			missing = fmt.Sprintf("the agent is not running yet (Deployment %s/%s has no available replica: kubectl -n %s describe deployment %s)", agent.DefaultNamespace, handshake.AgentName, agent.DefaultNamespace, handshake.AgentName)
		} else {
			missing = fmt.Sprintf("the hub has not accepted the cluster yet (on the hub: flotilla accept --clusters %s)", o.clusterName)
		}
		prog.Wait("Waiting", missing)
		return false, nil
	})
	if errors.Is(err, cmdutil.ErrTimedOut) {
		return fmt.Errorf("timed out after --timeout %s waiting for cluster %s to join: %s", o.timeout, o.clusterName, missing)
	}
	return err
}
