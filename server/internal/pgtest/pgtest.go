// Package pgtest starts a throwaway PostgreSQL cluster for tests and
// benchmarks: Debian's server binaries (initdb, pg_ctl from
// /usr/lib/postgresql/*/bin, package postgresql), a data directory in a
// temp directory, a loopback TCP port and a unix socket directory beside
// the data. One cluster serves a whole test binary (see Main); each test
// takes a database of its own.
//
// PostgreSQL refuses to run as root. Run as root (as CI does), the cluster
// runs as the "postgres" user that Debian's package creates: its directory
// is made for and owned by that user.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	dir  string // the temp directory: data/, sock/, log
	bin  string // directory of initdb, pg_ctl
	port int
	cred *syscall.Credential // nil: run as the current user
	dbs  atomic.Int64        // databases created, for unique names
}

// The server's settings: a throwaway cluster keeps nothing across a power
// loss, so it skips fsync; the number of connections fits several test
// packages' pools at once.
var serverSettings = []string{
	"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
	"-c", "max_connections=200", "-c", "shared_buffers=64MB",
}

// Start creates and starts a cluster. It fails with an explanation when
// the server binaries are not installed.
func Start(ctx context.Context) (*Cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		if c.cred, err = postgresUser(); err != nil {
			return nil, err
		}
	}
	base := os.TempDir()
	if c.cred != nil && !traversable(base) {
		base = "/tmp" // the postgres user must reach the data directory
	}
	if c.dir, err = os.MkdirTemp(base, "agentsync-pg-"); err != nil {
		return nil, fmt.Errorf("pgtest: temp dir: %w", err)
	}
	if err := c.own(c.dir); err != nil {
		c.removeDir()
		return nil, err
	}
	if err := c.run(ctx, "initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--locale=C", "--no-sync", "--no-instructions"); err != nil {
		c.removeDir()
		return nil, err
	}
	if err := os.Mkdir(c.sock(), 0o755); err != nil {
		c.removeDir()
		return nil, fmt.Errorf("pgtest: socket dir: %w", err)
	}
	if err := c.own(c.sock()); err != nil {
		c.removeDir()
		return nil, err
	}
	if c.port, err = freePort(); err != nil {
		c.removeDir()
		return nil, err
	}
	if err := c.startServer(ctx); err != nil {
		c.removeDir()
		return nil, err
	}
	return c, nil
}

// startServer starts the server on the cluster's data, port and socket.
func (c *Cluster) startServer(ctx context.Context) error {
	opts := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-k", c.sock()}, serverSettings...)
	if err := c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", c.data(), "-l", filepath.Join(c.dir, "log"),
		"-o", strings.Join(opts, " ")); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("%w\nserver log:\n%s", err, log)
	}
	return nil
}

// Restart stops the server (a fast shutdown: every session is ended and
// its connection dropped, open transactions roll back) and starts it
// again on the same port after down: an outage of the database as its
// clients see it. What was committed survives. (An immediate stop would
// be a crash, and with this cluster's synchronous_commit=off a crash may
// lose commits already acknowledged, which no production setting does.)
func (c *Cluster) Restart(ctx context.Context, down time.Duration) error {
	if err := c.run(ctx, "pg_ctl", "stop", "-m", "fast", "-w", "-D", c.data()); err != nil {
		return err
	}
	select {
	case <-time.After(down):
	case <-ctx.Done():
	}
	return c.startServer(ctx)
}

// Stop stops the server at once and removes its directory.
func (c *Cluster) Stop() error {
	err := c.run(context.Background(), "pg_ctl", "stop", "-m", "immediate", "-w", "-D", c.data())
	return errors.Join(err, c.removeDir())
}

// URL is the connection string of database db as the superuser.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// CreateDatabase creates a new, empty database and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("test_%d", c.dbs.Add(1))
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return c.URL(name), nil
}

// Database is CreateDatabase for one test, failing it on error.
func (c *Cluster) Database(t testing.TB) string {
	t.Helper()
	url, err := c.CreateDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// Main starts a cluster for a test binary, runs its tests and stops the
// cluster: use it from TestMain as os.Exit(pgtest.Main(m, &cluster)). A
// cluster that does not start fails the run with the reason, never skips.
func Main(m *testing.M, c **Cluster) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cl, err := Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: cannot start the throwaway PostgreSQL cluster these tests need: %v\n", err)
		return 1
	}
	*c = cl
	code := m.Run()
	if err := cl.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: stop: %v\n", err)
	}
	return code
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }
func (c *Cluster) sock() string { return filepath.Join(c.dir, "sock") }

func (c *Cluster) removeDir() error { return os.RemoveAll(c.dir) }

// own gives dir to the user the server runs as.
func (c *Cluster) own(dir string) error {
	if c.cred == nil {
		return nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
		return fmt.Errorf("pgtest: give %s to the postgres user: %w", dir, err)
	}
	return nil
}

// run runs one of the server's programs as the server's user.
func (c *Cluster) run(ctx context.Context, prog string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.dir
	// A clean environment: no PGDATA/PGPORT of the caller, and a locale the
	// server accepts whatever the caller's is.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "HOME=" + c.dir}
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: %s %s: %w\n%s", prog, strings.Join(args, " "), err, out)
	}
	return nil
}

// findBinaries returns the newest installed server's bin directory.
func findBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), "initdb")); err == nil {
				return filepath.Dir(p), nil
			}
		}
	}
	return "", errors.New("PostgreSQL's server programs (initdb, pg_ctl) are not installed: " +
		"install Debian's package with `apt-get install -y postgresql` (.ci/run does)")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// postgresUser is the user a root process runs the server as.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses root; the \"postgres\" user "+
			"(made by Debian's postgresql package) is missing: %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// traversable reports whether every directory from dir up to the root
// lets other users through.
func traversable(dir string) bool {
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
