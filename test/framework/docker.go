package framework

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DockerLabel marks every container and network a Docker harness creates,
// with the harness's run id as its value, so that cleanup finds them all,
// even those whose creation failed halfway.
const DockerLabel = "io.flotilla.test-run"

// Docker drives the docker command line for container specs: it loads
// images, creates networks and containers named and labelled for this run
// alone, and removes them again. It shells out rather than speak the
// Engine API so that what the specs do is what a person types.
type Docker struct {
	// RunID is unique per harness; it prefixes every name and is the
	// value of DockerLabel.
	RunID string

	mu         sync.Mutex
	containers []*Container
	subnets    map[string]bool
}

// ErrNoDocker says that no Docker engine answered.
var ErrNoDocker = errors.New("no Docker engine answers")

// NewDocker returns a harness when a Docker engine answers the docker
// command line, and an error wrapping ErrNoDocker otherwise.
func NewDocker(ctx context.Context) (*Docker, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := exec.LookPath("docker"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDocker, err)
	}
	d := &Docker{subnets: map[string]bool{}}
	if _, err := d.Command(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDocker, err)
	}
	id := make([]byte, 3)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	d.RunID = hex.EncodeToString(id)
	return d, nil
}

// Name is the run's name for a container or network called short.
func (d *Docker) Name(short string) string { return "flotilla-" + d.RunID + "-" + short }

// Command runs docker with args and returns its standard output; the
// error carries its standard error.
func (d *Docker) Command(ctx context.Context, args ...string) (string, error) {
	return d.command(ctx, nil, args...)
}

func (d *Docker) command(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// LoadImage loads an image archive (docker load -i) and returns the
// reference it was loaded as.
func (d *Docker) LoadImage(ctx context.Context, archive string) (string, error) {
	out, err := d.Command(ctx, "load", "-i", archive)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(line), "Loaded image: "); ok {
			return ref, nil
		}
	}
	return "", fmt.Errorf("docker load -i %s named no image: %s", archive, out)
}

// Network is a user-defined bridge network of this run, on a subnet of
// its own so that containers can be given fixed addresses on it.
type Network struct {
	// Name is the network's docker name.
	Name string
	// Subnet is a /24.
	Subnet *net.IPNet
}

// Addr is the network's address ending in host (2 to 254; 1 is the gateway).
func (n *Network) Addr(host byte) string {
	ip := make(net.IP, 4)
	copy(ip, n.Subnet.IP.To4())
	ip[3] = host
	return ip.String()
}

// CreateNetwork creates a bridge network on a free 10.x.y.0/24, trying
// other subnets while docker says one overlaps a network that exists.
func (d *Docker) CreateNetwork(ctx context.Context, short string) (*Network, error) {
	name := d.Name(short)
	var lastErr error
	for range 20 {
		b, err := rand.Int(rand.Reader, big.NewInt(64*256))
		if err != nil {
			return nil, err
		}
		// 10.192.0.0/10 rather than all of 10/8: docker's own default
		// pools and most corporate routes live lower.
		n := int(b.Int64())
		cidr := fmt.Sprintf("10.%d.%d.0/24", 192+n/256, n%256)
		d.mu.Lock()
		taken := d.subnets[cidr]
		d.subnets[cidr] = true
		d.mu.Unlock()
		if taken {
			continue
		}
		_, subnet, _ := net.ParseCIDR(cidr)
		_, lastErr = d.Command(ctx, "network", "create", "--driver", "bridge", "--subnet", cidr, "--label", DockerLabel+"="+d.RunID, name)
		if lastErr == nil {
			return &Network{Name: name, Subnet: subnet}, nil
		}
		if !strings.Contains(lastErr.Error(), "overlap") {
			return nil, lastErr
		}
	}
	return nil, fmt.Errorf("no free subnet for network %s: %w", name, lastErr)
}

// File is copied into a container before it starts.
type File struct {
	Path string
	Data []byte
	Mode int64
	// Under, when set, is a directory of the image above Path's; the
	// directories between them are created, owned by the image's user.
	Under string
}

// ContainerSpec describes a container to run.
type ContainerSpec struct {
	// Name is short; the container's name is Docker.Name(Name), which is
	// also its host name.
	Name  string
	Image string
	// Network and IP attach the container at start; IP may be empty for
	// an address docker picks.
	Network *Network
	IP      string
	// Publish are container TCP ports published on 127.0.0.1, each on a
	// port the engine picks (HostPort tells which).
	Publish []int
	// Files are written into the container before it starts, owned by the
	// image's user, each into a directory that exists in the image.
	Files []File
	// Mounts are bind mounts of this machine's files, as docker run -v
	// takes them (HOST:CONTAINER[:ro]).
	Mounts []string
	// User, when set, runs the container as this user instead of the
	// image's (docker run --user UID:GID).
	User string
	// Args follow the image's entrypoint.
	Args []string
}

// Container is a container of this run.
type Container struct {
	// Name is the container's docker name.
	Name string
	d    *Docker
}

// Start creates a container, copies its files in and starts it.
func (d *Docker) Start(ctx context.Context, spec ContainerSpec) (*Container, error) {
	c, err := d.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	if _, err := d.Command(ctx, "start", c.Name); err != nil {
		return nil, err
	}
	return c, nil
}

// Start starts a created or stopped container.
func (c *Container) Start(ctx context.Context) error {
	_, err := c.d.Command(ctx, "start", c.Name)
	return err
}

// Create creates a container and copies its files in, without starting it.
func (d *Docker) Create(ctx context.Context, spec ContainerSpec) (*Container, error) {
	c := &Container{Name: d.Name(spec.Name), d: d}
	args := []string{"create", "--name", c.Name, "--hostname", c.Name, "--label", DockerLabel + "=" + d.RunID}
	if spec.Network != nil {
		args = append(args, "--network", spec.Network.Name)
		if spec.IP != "" {
			args = append(args, "--ip", spec.IP)
		}
	}
	for _, p := range spec.Publish {
		args = append(args, "--publish", fmt.Sprintf("127.0.0.1::%d", p))
	}
	for _, m := range spec.Mounts {
		args = append(args, "--volume", m)
	}
	if spec.User != "" {
		args = append(args, "--user", spec.User)
	}
	args = append(append(args, spec.Image), spec.Args...)
	d.mu.Lock()
	d.containers = append(d.containers, c)
	d.mu.Unlock()
	if _, err := d.Command(ctx, args...); err != nil {
		return nil, err
	}
	if len(spec.Files) > 0 {
		if err := c.CopyIn(ctx, spec.Image, spec.Files); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// CopyIn writes files into the container (docker cp), owned by the user
// image runs as, so that a non-root process may read them.
func (c *Container) CopyIn(ctx context.Context, image string, files []File) error {
	user, err := c.d.Command(ctx, "image", "inspect", "--format", "{{.Config.User}}", image)
	if err != nil {
		return err
	}
	uid, gid := 0, 0
	if u, g, ok := strings.Cut(strings.TrimSpace(user), ":"); u != "" {
		if uid, err = strconv.Atoi(u); err != nil {
			return fmt.Errorf("image %s runs as %q, not a numeric user", image, user)
		}
		gid = uid
		if ok {
			if gid, err = strconv.Atoi(g); err != nil {
				return fmt.Errorf("image %s runs as %q, not a numeric group", image, user)
			}
		}
	}
	for _, f := range files {
		mode := f.Mode
		if mode == 0 {
			mode = 0o600
		}
		// One archive per file, extracted into its directory, which must
		// exist in the image: an archive holding the parents too would
		// hand them (/home, say) to the user.
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		dest, name := path.Dir(f.Path), path.Base(f.Path)
		if f.Under != "" {
			rel := strings.TrimPrefix(f.Path, strings.TrimSuffix(f.Under, "/")+"/")
			if rel == f.Path {
				return fmt.Errorf("file %s is not under %s", f.Path, f.Under)
			}
			dest, name = f.Under, rel
			var dirs []string
			for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
				dirs = append([]string{dir}, dirs...)
			}
			for _, dir := range dirs {
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o700, Uid: uid, Gid: gid, ModTime: time.Now()}); err != nil {
					return err
				}
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(f.Data)), Uid: uid, Gid: gid, ModTime: time.Now()}); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
		if err := tw.Close(); err != nil {
			return err
		}
		if _, err := c.d.command(ctx, &buf, "cp", "-", c.Name+":"+dest); err != nil {
			return err
		}
	}
	return nil
}

// CopyOut reads one file from the container (docker cp).
func (c *Container) CopyOut(ctx context.Context, file string) ([]byte, error) {
	out, err := c.d.Command(ctx, "cp", c.Name+":"+file, "-")
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(strings.NewReader(out))
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("docker cp %s:%s: no regular file in the archive: %w", c.Name, file, err)
		}
		if h.Typeflag == tar.TypeReg {
			return io.ReadAll(tr)
		}
	}
}

// HostPort is the 127.0.0.1 port on which the container's TCP port is published.
func (c *Container) HostPort(ctx context.Context, port int) (int, error) {
	out, err := c.d.Command(ctx, "port", c.Name, fmt.Sprintf("%d/tcp", port))
	if err != nil {
		return 0, err
	}
	// One line per host address: 127.0.0.1:32768.
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if host, p, err := net.SplitHostPort(strings.TrimSpace(line)); err == nil && host == "127.0.0.1" {
			return strconv.Atoi(p)
		}
	}
	return 0, fmt.Errorf("port %d of %s is not published on 127.0.0.1: %q", port, c.Name, out)
}

// Logs returns what the container printed, stdout and stderr apart.
func (c *Container) Logs(ctx context.Context) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "logs", c.Name)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("docker logs %s: %w: %s", c.Name, err, errOut.String())
	}
	return out.String(), errOut.String(), nil
}

// Output returns everything the container printed, stdout then stderr
// (the binaries under test log to stderr only).
func (c *Container) Output(ctx context.Context) string {
	out, errOut, err := c.Logs(ctx)
	if err != nil {
		return err.Error()
	}
	return out + errOut
}

// Tail returns the last n lines of Output, for failure messages.
func (c *Container) Tail(ctx context.Context, n int) string {
	lines := strings.Split(strings.TrimRight(c.Output(ctx), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// State is the container's status ("running", "exited", ...) and exit code.
func (c *Container) State(ctx context.Context) (string, int, error) {
	out, err := c.d.Command(ctx, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", c.Name)
	if err != nil {
		return "", 0, err
	}
	status, code, _ := strings.Cut(strings.TrimSpace(out), " ")
	n, _ := strconv.Atoi(code)
	return status, n, nil
}

// WaitForOutput waits until the container has printed text, and fails
// early when it stops first.
func (c *Container) WaitForOutput(ctx context.Context, text string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(c.Output(ctx), text) {
			return nil
		}
		if status, code, err := c.State(ctx); err == nil && status != "running" && status != "created" {
			return fmt.Errorf("container %s is %s (exit code %d) without printing %q; last output:\n%s", c.Name, status, code, text, c.Tail(context.WithoutCancel(ctx), 20))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no %q from container %s after %s; last output:\n%s", text, c.Name, timeout, c.Tail(context.WithoutCancel(ctx), 20))
		case <-tick.C:
		}
	}
}

// Wait waits for the container to end and returns its exit code.
func (c *Container) Wait(ctx context.Context) (int, error) {
	out, err := c.d.Command(ctx, "wait", c.Name)
	if err != nil {
		return -1, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// Stop stops the container as `docker stop` does: SIGTERM, then SIGKILL
// after grace.
func (c *Container) Stop(ctx context.Context, grace time.Duration) error {
	_, err := c.d.Command(ctx, "stop", "--time", strconv.Itoa(int(grace.Seconds())), c.Name)
	return err
}

// Connect attaches the container to network n, at ip if not empty.
func (c *Container) Connect(ctx context.Context, n *Network, ip string) error {
	args := []string{"network", "connect"}
	if ip != "" {
		args = append(args, "--ip", ip)
	}
	_, err := c.d.Command(ctx, append(args, n.Name, c.Name)...)
	return err
}

// Disconnect cuts the container off network n.
func (c *Container) Disconnect(ctx context.Context, n *Network) error {
	_, err := c.d.Command(ctx, "network", "disconnect", n.Name, c.Name)
	return err
}

// WriteLogs writes the last lines of every container of this run to w,
// for a failure report.
func (d *Docker) WriteLogs(ctx context.Context, w io.Writer, lines int) {
	d.mu.Lock()
	containers := append([]*Container(nil), d.containers...)
	d.mu.Unlock()
	for _, c := range containers {
		fmt.Fprintf(w, "\n===== docker logs %s (last %d lines) =====\n%s\n", c.Name, lines, c.Tail(ctx, lines))
	}
}

// Cleanup removes every container (with its anonymous volumes) and
// network labelled with this run, whichever call created them.
func (d *Docker) Cleanup(ctx context.Context) error {
	filter := "label=" + DockerLabel + "=" + d.RunID
	var errs []error
	out, err := d.Command(ctx, "ps", "--all", "--quiet", "--filter", filter)
	errs = append(errs, err)
	if ids := fields(out); len(ids) > 0 {
		_, err := d.Command(ctx, append([]string{"rm", "--force", "--volumes"}, ids...)...)
		errs = append(errs, err)
	}
	out, err = d.Command(ctx, "network", "ls", "--quiet", "--filter", filter)
	errs = append(errs, err)
	if ids := fields(out); len(ids) > 0 {
		_, err := d.Command(ctx, append([]string{"network", "rm"}, ids...)...)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Leftovers lists the containers and networks of this run that still
// exist, to prove that Cleanup removed them.
func (d *Docker) Leftovers(ctx context.Context) ([]string, error) {
	filter := "label=" + DockerLabel + "=" + d.RunID
	containers, err := d.Command(ctx, "ps", "--all", "--format", "{{.Names}}", "--filter", filter)
	if err != nil {
		return nil, err
	}
	networks, err := d.Command(ctx, "network", "ls", "--format", "{{.Name}}", "--filter", filter)
	if err != nil {
		return nil, err
	}
	return append(fields(containers), fields(networks)...), nil
}

func fields(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if f := strings.TrimSpace(sc.Text()); f != "" {
			out = append(out, f)
		}
	}
	return out
}
