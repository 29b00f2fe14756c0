//go:build integration

package chaos

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kartalua/karta/internal/testenv"
)

// repoRoot is the module's root, from this package's directory.
const repoRoot = "../.."

// privateCluster is an etcd and a kube-apiserver of their own (hack/testenv.sh
// with its own state directory and ports, no nodes): the faults injected here
// would break the tests of other packages running at the same time on the
// shared test cluster.
type privateCluster struct {
	env        []string
	dir        string
	kubeconfig string
	cfg        *rest.Config
}

// startPrivateCluster starts it (the binaries are hack/testenv.sh's cache,
// built by make test-integration's start of the shared cluster) and stops
// it when the test ends.
func startPrivateCluster(t *testing.T) *privateCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "karta-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	c := &privateCluster{dir: filepath.Join(dir, "env")}
	c.env = append(os.Environ(),
		"KARTA_TESTENV_DIR="+c.dir,
		"KARTA_TESTENV_NODES=0",
		"KARTA_TESTENV_READY_TIMEOUT=120",
		"KARTA_TESTENV_ETCD_PORT="+freePort(t),
		"KARTA_TESTENV_ETCD_PEER_PORT="+freePort(t),
		"KARTA_TESTENV_APISERVER_PORT="+freePort(t),
		// Not started without nodes, but start checks they are free.
		"KARTA_TESTENV_CONTROLLER_MANAGER_PORT="+freePort(t),
		"KARTA_TESTENV_SCHEDULER_PORT="+freePort(t),
		"KARTA_TESTENV_KWOK_PORT="+freePort(t),
	)
	t.Cleanup(func() {
		if out, err := c.testenv("stop"); err != nil {
			t.Errorf("stopping the private cluster: %v\n%s", err, out)
		}
		_ = os.RemoveAll(dir)
	})
	if out, err := c.testenv("start"); err != nil {
		t.Fatalf("starting the private cluster: %v\n%s", err, out)
	}
	c.kubeconfig = filepath.Join(c.dir, "kubeconfig")
	c.cfg, err = clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c.cfg.QPS, c.cfg.Burst = 200, 400
	return c
}

// testenv runs hack/testenv.sh on the private cluster.
func (c *privateCluster) testenv(args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(repoRoot, "hack/testenv.sh"), args...)
	cmd.Env = c.env
	return cmd.CombinedOutput()
}

func (c *privateCluster) must(t *testing.T, args ...string) {
	t.Helper()
	if out, err := c.testenv(args...); err != nil {
		t.Fatalf("hack/testenv.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// freePort is a port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// buildKarta builds the karta binary once for the test.
func buildKarta(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "karta")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/karta")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/karta: %v\n%s", err, out)
	}
	return bin
}

// controllerProc is a `karta controller` process.
type controllerProc struct {
	name            string
	cmd             *exec.Cmd
	log             *testenv.SyncBuffer
	health, metrics string
	done            chan struct{}
}

var servingRE = regexp.MustCompile(`msg="serving ([^"]+)" addr=(\S+)`)

// startController runs `karta controller` with leader election and the gang
// output (volcano) against the cluster; it is killed when the test ends.
func startController(t *testing.T, bin string, c *privateCluster, identity string) *controllerProc {
	t.Helper()
	p := &controllerProc{name: identity, log: &testenv.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "controller", "--kubeconfig", c.kubeconfig,
		"--leader-election-namespace", "default", "--leader-election-identity", identity,
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--gang-output", "volcano")
	p.cmd.Stderr = p.log
	p.cmd.Stdout = io.Discard
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("controller %s log:\n%s", identity, p.log.String())
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for p.health == "" || p.metrics == "" {
		for _, m := range servingRE.FindAllStringSubmatch(p.log.String(), -1) {
			switch m[1] {
			case "health probes":
				p.health = m[2]
			case "metrics":
				p.metrics = m[2]
			}
		}
		select {
		case <-p.done:
			t.Fatalf("controller %s exited:\n%s", identity, p.log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("controller %s did not log its addresses:\n%s", identity, p.log.String())
		}
	}
	return p
}

// kill SIGKILLs the process (a crash: the lease is not released).
func (p *controllerProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// readyz is the answer of /readyz: its status code (0 when the request
// failed) and body.
func (p *controllerProc) readyz() (int, string) {
	return httpGet("http://" + p.health + "/readyz")
}

func (p *controllerProc) scrape() string {
	_, body := httpGet("http://" + p.metrics + "/metrics")
	return body
}

var client = &http.Client{Timeout: 5 * time.Second}

func httpGet(url string) (int, string) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metric is the value of the sample whose name and labels are series
// (`name{labels}` as the text format prints them), -1 when absent.
func metric(scrape, series string) float64 {
	for _, line := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// waitFor polls cond every 100 ms until it holds or d passed; it returns
// how long that took and whether it held.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	for {
		if cond() {
			return time.Since(start), true
		}
		if time.Since(start) > d || ctx.Err() != nil {
			return time.Since(start), false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func describe(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
