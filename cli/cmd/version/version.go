package version

import (
	"runtime"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/handshake"
	"github.com/flotilla-io/flotilla/internal/version"
)

// versionInfo is what `flotilla version -o json|yaml` prints.
type versionInfo struct {
	ClientVersion clientVersion  `json:"clientVersion"`
	ServerVersion *serverVersion `json:"serverVersion,omitempty"`
}

type clientVersion struct {
	Version string `json:"version"`
	// Revision is the commit the binary was built from.
	Revision string `json:"revision,omitempty"`
	// AgentImage is the image flotilla join installs by default.
	AgentImage string `json:"agentImage"`
	// HubImage is the image of the hub of the same version.
	HubImage  string `json:"hubImage"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

type serverVersion struct {
	URL        string `json:"url"`
	Kubernetes string `json:"kubernetes"`
}

// NewCommand returns `flotilla version`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	var clientOnly bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of flotilla, and of the API server when reachable",
		Long: `Print the version of this flotilla binary, the agent and hub images of the
same version (flotilla join installs the agent image by default) and, when the kubeconfig's API
server answers, that server's Kubernetes version. An unreachable server is
noted on standard error; the command still succeeds.`,
		Example: `  flotilla version
  flotilla version --client -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			info := versionInfo{ClientVersion: clientVersion{
				Version:    version.Version,
				Revision:   version.Revision(),
				AgentImage: handshake.DefaultAgentImage,
				HubImage:   version.Image("flotilla-hub"),
				GoVersion:  runtime.Version(),
				Platform:   runtime.GOOS + "/" + runtime.GOARCH,
			}}
			if !clientOnly {
				info.ServerVersion = serverVersionOf(g)
			}
			if output != cmdutil.OutputText {
				return cmdutil.PrintData(g.Streams.Out, output, info)
			}
			cmd.Printf("Client Version: %s\n", version.String())
			cmd.Printf("Images: %s, %s\n", info.ClientVersion.AgentImage, info.ClientVersion.HubImage)
			if s := info.ServerVersion; s != nil {
				cmd.Printf("Server Version: %s (Kubernetes, at %s)\n", s.Kubernetes, s.URL)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print only the client version, without contacting a server")
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

// serverVersionOf asks the kubeconfig's API server for its version; nil
// when there is no kubeconfig or no answer (noted on standard error).
func serverVersionOf(g *cmdutil.Globals) *serverVersion {
	cfg, err := g.RestConfig(cmdutil.HubSide)
	if err != nil {
		if !clientcmd.IsEmptyConfig(err) && g.Kubeconfig != "" {
			g.Notef("Note: no server version: %v", err)
		}
		return nil
	}
	c, err := cmdutil.NewClients(cfg, "the API server at "+cfg.Host)
	if err != nil {
		g.Notef("Note: no server version: %v", err)
		return nil
	}
	v, err := c.Kube.Discovery().ServerVersion()
	if err != nil {
		g.Notef("Note: no server version: %v", cmdutil.Explain(err, c.Where, "get its version"))
		return nil
	}
	return &serverVersion{URL: cmdutil.ServerURL(cfg), Kubernetes: v.GitVersion}
}
