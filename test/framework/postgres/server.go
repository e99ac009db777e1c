package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNotInstalled is returned by Start where PostgreSQL's server binaries
// are not installed.
var ErrNotInstalled = errors.New("PostgreSQL server binaries not found (apt-get install postgresql postgresql-contrib)")

// Server is a PostgreSQL server that a test started.
type Server struct {
	bin      string
	dir      string
	data     string
	port     int
	settings []string
	cred     *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *bytes.Buffer
}

// Bin returns the directory of the newest installed PostgreSQL's initdb
// and postgres.
func Bin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, dir := range dirs {
		if isFile(filepath.Join(dir, "initdb")) && isFile(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	if initdb, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(initdb), nil
	}
	return "", ErrNotInstalled
}

func version(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}

// Start initializes a data directory and starts a server on it. settings
// are extra server settings, "name=value".
func Start(ctx context.Context, settings ...string) (*Server, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "flotilla-postgres-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, data: filepath.Join(dir, "data"), settings: settings}
	if err := s.init(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// init runs initdb, as nobody when this process is root.
func (s *Server) init(ctx context.Context) error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			return fmt.Errorf("PostgreSQL refuses to run as root, and there is no user nobody to run it as: %w", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(s.dir, int(uid), int(gid)); err != nil {
			return err
		}
		// nobody must reach the directory through its parents.
		if err := reachable(s.dir); err != nil {
			return err
		}
	}
	if err := os.Mkdir(filepath.Join(s.dir, "socket"), 0o700); err != nil {
		return err
	}
	if s.cred != nil {
		if err := os.Chown(filepath.Join(s.dir, "socket"), int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	cmd := s.command(ctx, "initdb", "-D", s.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out.Bytes())
	}
	return nil
}

// reachable says whether other users may traverse dir's parents.
func reachable(dir string) error {
	for p := filepath.Dir(dir); p != "/"; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("PostgreSQL runs as nobody, who cannot enter %s (mode %v): set TMPDIR to a directory every user can reach", p, info.Mode().Perm())
		}
	}
	return nil
}

func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin", "HOME=" + s.dir, "TMPDIR=" + s.dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
	return cmd
}

// Start starts the server again after Stop, on the same port and data.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("the PostgreSQL server is running already")
	}
	if s.port == 0 {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.port = port
	}
	args := []string{"-D", s.data, "-p", strconv.Itoa(s.port), "-h", "127.0.0.1", "-k", filepath.Join(s.dir, "socket"),
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200"}
	for _, setting := range s.settings {
		args = append(args, "-c", setting)
	}
	// The server outlives ctx, which only bounds the start: Stop and
	// Close end it.
	cmd := s.command(context.Background(), "postgres", args...)
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done, s.log = cmd, done, log
	if err := s.waitReady(ctx, done); err != nil {
		s.stopLocked()
		return fmt.Errorf("%w\n%s", err, log.Bytes())
	}
	return nil
}

// waitReady polls until the server takes connections, it exits or ctx
// ends.
func (s *Server) waitReady(ctx context.Context, done <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := pgconn.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-done:
			return errors.New("postgres exited while starting")
		case <-ctx.Done():
			return fmt.Errorf("postgres did not take connections on 127.0.0.1:%d: %w", s.port, err)
		case <-tick.C:
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// DSN returns the URL of a database of the server.
func (s *Server) DSN(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, database)
}

// Port is the server's TCP port.
func (s *Server) Port() int { return s.port }

// CreateDatabase creates a database and returns its DSN.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgconn.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE DATABASE "`+name+`"`).ReadAll(); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

// Stop stops the server (a fast shutdown: connections are closed) and
// keeps its data for Start.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
}

func (s *Server) stopLocked() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	// The server's children (its background workers) exit with it; a
	// straggler of the process group does not outlive the test.
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd = nil
}

// Log returns what the server printed since it last started.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	s.Stop()
	return os.RemoveAll(s.dir)
}

// TB is what New needs of a test: *testing.T, *testing.B and GinkgoT()
// have it.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// New starts a server for a test and closes it when the test ends. Where
// PostgreSQL is not installed the test is skipped, except in CI
// (CI=true), which installs it: there the test fails.
func New(t TB, settings ...string) *Server {
	t.Helper()
	s, err := Start(context.Background(), settings...)
	if errors.Is(err, ErrNotInstalled) && os.Getenv("CI") != "true" {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
