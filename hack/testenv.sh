#!/usr/bin/env bash
# testenv.sh builds and runs a small, real Kubernetes control plane for karta's
# integration tests: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kwok (fake nodes on which pods "run").
#
# Binaries are built from source with the local Go toolchain (no downloads of
# release tarballs, no container runtime) and cached per version, so only the
# first run pays the build (about 5 minutes on an idle 2-core machine, 2 GB
# peak memory). Runtime state lives in a throw-away directory and is
# recreated by every start.
#
# Usage: hack/testenv.sh build|start|stop|env|status
#        hack/testenv.sh kill|relaunch|pause|resume COMPONENT   (fault injection)
#
# Environment (all optional):
#   KARTA_TESTENV_CACHE          binary cache      (default $HOME/.cache/karta-testenv)
#   KARTA_TESTENV_DIR            runtime state     (default /tmp/karta-testenv)
#   KARTA_TESTENV_ETCD_PORT      etcd client port  (default 23790)
#   KARTA_TESTENV_ETCD_PEER_PORT etcd peer port    (default 23800)
#   KARTA_TESTENV_APISERVER_PORT API server port   (default 26443)
#   KARTA_TESTENV_CONTROLLER_MANAGER_PORT, KARTA_TESTENV_SCHEDULER_PORT,
#   KARTA_TESTENV_KWOK_PORT      health ports      (default 26257, 26259, 26247)
#   KARTA_TESTENV_NODES          fake nodes; 0 skips kwok, controller-manager
#                                and scheduler     (default 2)
#   KARTA_TESTENV_READY_TIMEOUT  seconds to wait for each component (default 60)
#
# Host tools needed besides Go: bash, curl, openssl and util-linux (flock,
# setsid); all but curl and openssl are in every Debian base image.
set -euo pipefail
shopt -s inherit_errexit

readonly K8S_VERSION=v1.37.2
readonly K8S_STAGING_VERSION=v0.37.2
readonly ETCD_VERSION=v3.6.8
readonly KWOK_VERSION=v0.8.0
# Kubernetes' gang scheduling (KEP-4671): the Workload API's Workload and
# PodGroup (scheduling.k8s.io/v1beta1, the version karta writes) and
# kube-scheduler's GangScheduling plugin, behind the GenericWorkload gate
# (beta in 1.37, off by default). CompositePodGroup (alpha in 1.37) nests
# PodGroups in CompositePodGroups (scheduling.k8s.io/v1alpha3 only, so that
# version is served too) for hierarchical gangs; it requires
# TopologyAwareWorkloadScheduling (alpha) besides GenericWorkload.
readonly FEATURE_GATES=GenericWorkload=true,TopologyAwareWorkloadScheduling=true,CompositePodGroup=true
readonly RUNTIME_CONFIG=scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true

readonly CACHE_DIR="${KARTA_TESTENV_CACHE:-${HOME}/.cache/karta-testenv}"
readonly RUN_DIR="${KARTA_TESTENV_DIR:-/tmp/karta-testenv}"
readonly ETCD_PORT="${KARTA_TESTENV_ETCD_PORT:-23790}"
readonly ETCD_PEER_PORT="${KARTA_TESTENV_ETCD_PEER_PORT:-23800}"
readonly APISERVER_PORT="${KARTA_TESTENV_APISERVER_PORT:-26443}"
readonly CONTROLLER_MANAGER_PORT="${KARTA_TESTENV_CONTROLLER_MANAGER_PORT:-26257}"
readonly SCHEDULER_PORT="${KARTA_TESTENV_SCHEDULER_PORT:-26259}"
readonly KWOK_PORT="${KARTA_TESTENV_KWOK_PORT:-26247}"
readonly NODES="${KARTA_TESTENV_NODES:-2}"
readonly READY_TIMEOUT="${KARTA_TESTENV_READY_TIMEOUT:-60}"

readonly NAME=karta-testenv
readonly APISERVER_URL="https://127.0.0.1:${APISERVER_PORT}"
readonly ETCD_URL="http://127.0.0.1:${ETCD_PORT}"
readonly KUBECONFIG_FILE="${RUN_DIR}/kubeconfig"
# Start order; stop walks it backwards. The API server must stop before etcd:
# the other way round it hangs retrying its storage.
readonly COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

# Binary locations: <cache>/<component>-<version>/<component>.
bin_path() {
  local component=$1 version
  case "${component}" in
    etcd) version=${ETCD_VERSION} ;;
    kwok) version=${KWOK_VERSION} ;;
    *) version=${K8S_VERSION} ;;
  esac
  echo "${CACHE_DIR}/${component}-${version}/${component}"
}
readonly KWOK_STAGES="${CACHE_DIR}/kwok-${KWOK_VERSION}/stages.yaml"

log() { echo "testenv: $*" >&2; }
die() {
  echo "testenv: error: $*" >&2
  exit 1
}

require_tools() {
  local tool
  for tool in "$@"; do
    command -v "${tool}" >/dev/null 2>&1 || die "${tool} is required but not installed"
  done
}

# go_scratch runs go in a scratch module directory with settings that can never
# touch karta's own go.mod/go.sum or a go.work above it.
go_scratch() {
  local dir=$1
  shift
  (cd "${dir}" && GOWORK=off GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 go "$@")
}

# go_logged runs go_scratch with its chatter (downloads, upgrades, compiler
# output) in <dir>/build.log, printing the log's end only when it fails.
go_logged() {
  local dir=$1
  shift
  go_scratch "${dir}" "$@" >>"${dir}/build.log" 2>&1 && return 0
  echo "testenv: go $* failed in ${dir}; end of ${dir}/build.log:" >&2
  tail -n 40 "${dir}/build.log" >&2
  exit 1
}

# scratch_module writes <dir>/go.mod: a throw-away main module requiring
# module@version (none when module is empty) plus extra lines.
scratch_module() {
  local dir=$1 module=$2 version=$3 extra=${4:-}
  mkdir -p "${dir}"
  {
    echo "module karta.local/testenv/$(basename "${dir}")"
    echo
    echo "go 1.26.0"
    if [[ -n "${module}" ]]; then
      echo
      echo "require ${module} ${version}"
    fi
    if [[ -n "${extra}" ]]; then
      echo
      echo "${extra}"
    fi
  } >"${dir}/go.mod"
  # Start go.sum afresh so a version bump never keeps stale sums.
  : >"${dir}/go.sum"
  : >"${dir}/build.log"
}

# k8s_replaces turns the staging replace block of k8s.io/kubernetes' own go.mod
# (k8s.io/X => ./staging/src/k8s.io/X) into published-module replaces
# (k8s.io/X => k8s.io/X v0.N.M), which is what makes it buildable as a
# dependency. It runs in the (still requirement-free) scratch module so no
# other go.mod is consulted.
k8s_replaces() {
  local dir=$1 gomod
  gomod=$(go_scratch "${dir}" mod download -json "k8s.io/kubernetes@${K8S_VERSION}" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
  [[ -f "${gomod}" ]] || die "cannot find go.mod of k8s.io/kubernetes@${K8S_VERSION}"
  echo "replace ("
  sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/src/.*$#\t\1 => \1 '"${K8S_STAGING_VERSION}"'#p' "${gomod}"
  echo ")"
}

# build_into builds packages of a scratch module into a temporary directory and
# moves each binary into its cache directory only when all of them linked, so
# an interrupted build never looks cached.
build_into() {
  local dir=$1 ldflags=$2
  shift 2
  local out="${dir}/out"
  rm -rf "${out}"
  mkdir -p "${out}"
  go_logged "${dir}" build -trimpath -ldflags "${ldflags}" -o "${out}/" "$@"
}

install_bin() {
  local src=$1 component=$2 dst
  dst=$(bin_path "${component}")
  mkdir -p "$(dirname "${dst}")"
  mv -f "${src}" "${dst}"
}

build_kubernetes() {
  local components=(kube-apiserver kube-controller-manager kube-scheduler) c missing=0
  for c in "${components[@]}"; do [[ -x "$(bin_path "${c}")" ]] || missing=1; done
  ((missing)) || return 0

  local dir="${CACHE_DIR}/src/kubernetes-${K8S_VERSION}" pkgs=() replaces t0=${SECONDS}
  log "building ${components[*]} ${K8S_VERSION} (about 5 minutes on a cold cache)"
  scratch_module "${dir}" "" ""
  replaces=$(k8s_replaces "${dir}")
  scratch_module "${dir}" k8s.io/kubernetes "${K8S_VERSION}" "${replaces}"
  for c in "${components[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/${c}"); done
  go_logged "${dir}" get "${pkgs[@]/%/@${K8S_VERSION}}"
  # Stamp the version so discovery (/version) and compatibility checks see
  # the real release instead of v0.0.0-master.
  local minor=${K8S_VERSION#v1.}
  minor=${minor%%.*}
  local v=k8s.io/component-base/version
  build_into "${dir}" "-s -w -X ${v}.gitVersion=${K8S_VERSION} -X ${v}.gitMajor=1 -X ${v}.gitMinor=${minor} -X ${v}.gitTreeState=clean" "${pkgs[@]}"
  for c in "${components[@]}"; do install_bin "${dir}/out/${c}" "${c}"; done
  log "built ${components[*]} in $((SECONDS - t0))s"
}

build_etcd() {
  [[ -x "$(bin_path etcd)" ]] && return 0
  local dir="${CACHE_DIR}/src/etcd-${ETCD_VERSION}"
  local t0=${SECONDS}
  log "building etcd ${ETCD_VERSION}"
  scratch_module "${dir}" go.etcd.io/etcd/server/v3 "${ETCD_VERSION}"
  # The server module's root package is etcd's main (it calls etcdmain); go
  # names the binary after the path without its major version: "server".
  go_logged "${dir}" get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
  build_into "${dir}" "-s -w" go.etcd.io/etcd/server/v3
  install_bin "${dir}/out/server" etcd
  log "built etcd in $((SECONDS - t0))s"
}

build_kwok() {
  [[ -x "$(bin_path kwok)" && -f "${KWOK_STAGES}" ]] && return 0
  local dir="${CACHE_DIR}/src/kwok-${KWOK_VERSION}"
  local t0=${SECONDS}
  log "building kwok ${KWOK_VERSION}"
  scratch_module "${dir}" sigs.k8s.io/kwok "${KWOK_VERSION}"
  go_logged "${dir}" get "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
  build_into "${dir}" "-s -w" sigs.k8s.io/kwok/cmd/kwok
  install_bin "${dir}/out/kwok" kwok
  # The kwok binary has no built-in lifecycle (kwokctl normally supplies it):
  # take the "fast" node and pod stages shipped in the module, the same set
  # kwokctl uses by default (heartbeat with leases, pods of Jobs complete).
  local src
  src=$(go_scratch "${dir}" list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  local stages=(
    node/fast/node-initialize.yaml
    node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
    pod/fast/pod-ready.yaml
    pod/fast/pod-complete.yaml
    pod/fast/pod-delete.yaml
  )
  local s tmp="${KWOK_STAGES}.tmp"
  : >"${tmp}"
  for s in "${stages[@]}"; do
    { echo "---"; cat "${src}/kustomize/stage/${s}"; } >>"${tmp}"
  done
  mv -f "${tmp}" "${KWOK_STAGES}"
  log "built kwok in $((SECONDS - t0))s"
}

cmd_build() {
  require_tools go flock
  mkdir -p "${CACHE_DIR}"
  # Serialise concurrent builds (two checkouts sharing one cache).
  exec 9>"${CACHE_DIR}/.build.lock"
  flock 9
  build_etcd
  build_kwok
  build_kubernetes
  exec 9>&-
}

# ---------------------------------------------------------------- runtime

pid_file() { echo "${RUN_DIR}/$1.pid"; }
log_file() { echo "${RUN_DIR}/$1.log"; }

# running_pid prints the pid of a component we started and that still runs.
# It checks the command line too, so a recycled pid is never mistaken for ours.
running_pid() {
  local component=$1 pid
  [[ -f "$(pid_file "${component}")" ]] || return 1
  pid=$(<"$(pid_file "${component}")")
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  kill -0 "${pid}" 2>/dev/null || return 1
  local cmdline
  cmdline=$(tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null) || return 1
  # Substring, not prefix: for a moment after launch the process is still
  # setsid, about to exec the binary.
  [[ "${cmdline}" == *"$(bin_path "${component}") "* ]] || return 1
  echo "${pid}"
}

# launched_alive reports whether the process launch just started for a
# component is alive. Unlike running_pid it does not ask that it has
# exec'd its binary yet: on a loaded machine the forked shell can take
# longer than launch waits, and that is a slow start, not an exit. (The
# pid was written moments ago, so it cannot have been reused.)
launched_alive() {
  local pid
  [[ -f "$(pid_file "$1")" ]] || return 1
  pid=$(<"$(pid_file "$1")")
  [[ "${pid}" =~ ^[0-9]+$ ]] && kill -0 "${pid}" 2>/dev/null || return 1
  # An exited child not yet reaped still answers kill -0.
  local stat
  stat=$(<"/proc/${pid}/stat") 2>/dev/null || return 1
  [[ "${stat##*) }" != Z* ]]
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

token() { cut -d, -f1 "${RUN_DIR}/pki/token.csv"; }

# api_curl calls the API server as the admin user. The user agent matters:
# the API server pretty-prints JSON for curl's own, which node_ready's match
# does not expect.
api_curl() {
  curl --silent --show-error --fail --max-time 10 --user-agent "${NAME}" \
    --cacert "${RUN_DIR}/pki/apiserver.crt" \
    -H "Authorization: Bearer $(token)" "$@"
}

# launch starts a component detached from this shell's session (so a Ctrl-C
# in the terminal does not kill it out of order) and records its pid.
launch() {
  local component=$1
  shift
  local bin
  bin=$(bin_path "${component}")
  setsid "${bin}" "$@" </dev/null >"$(log_file "${component}")" 2>&1 &
  local pid=$!
  echo "${pid}" >"$(pid_file "${component}")"
  # Until the forked shell has exec'd setsid, the pid does not look like
  # ours yet; wait for that so wait_ready never mistakes it for an exit.
  local i
  for ((i = 0; i < 50; i++)); do
    running_pid "${component}" >/dev/null && return 0
    kill -0 "${pid}" 2>/dev/null || return 0
    sleep 0.1
  done
}

# fail_start prints the end of a component's log, stops everything already
# started and exits non-zero.
fail_start() {
  local component=$1 reason=$2
  echo "testenv: ${component} ${reason}; last lines of $(log_file "${component}"):" >&2
  tail -n 30 "$(log_file "${component}")" >&2 || true
  cmd_stop
  exit 1
}

# wait_ready polls a check command until it succeeds, failing early when the
# component's process has exited.
wait_ready() {
  local component=$1
  shift
  local deadline=$((SECONDS + READY_TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    launched_alive "${component}" || fail_start "${component}" "exited during start-up"
    ((SECONDS < deadline)) || fail_start "${component}" "not ready after ${READY_TIMEOUT}s"
    sleep 0.5
  done
}

# Checks match captured output instead of piping into grep -q, which may
# exit before curl is done and fail the pipe (pipefail) on SIGPIPE.
etcd_healthy() { [[ "$(curl --silent --fail --max-time 5 "${ETCD_URL}/health")" == *'"health":"true"'* ]]; }
apiserver_ready() { [[ "$(api_curl "${APISERVER_URL}/readyz")" == ok ]]; }
https_healthy() { [[ "$(curl --silent --insecure --max-time 5 "https://127.0.0.1:$1/healthz")" == ok ]]; }
http_healthy() { [[ "$(curl --silent --max-time 5 "http://127.0.0.1:$1/healthz")" == ok ]]; }
node_ready() { [[ "$(api_curl "${APISERVER_URL}/api/v1/nodes/$1")" == *'"type":"Ready","status":"True"'* ]]; }

write_pki() {
  local pki="${RUN_DIR}/pki"
  mkdir -p "${pki}"
  # One self-signed serving certificate that is its own CA: clients trust it
  # directly through the kubeconfig.
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=${NAME}" \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -keyout "${pki}/apiserver.key" -out "${pki}/apiserver.crt" 2>/dev/null
  # Service-account token signing key pair (API server signs, controller-manager
  # signs tokens for its controllers and publishes the root CA).
  openssl genrsa -out "${pki}/sa.key" 2048 2>/dev/null
  openssl rsa -in "${pki}/sa.key" -pubout -out "${pki}/sa.pub" 2>/dev/null
  # Static token of an admin user: system:masters bypasses RBAC.
  echo "$(openssl rand -hex 32),${NAME}-admin,${NAME}-admin,system:masters" >"${pki}/token.csv"
  chmod 600 "${pki}"/*
}

write_kubeconfig() {
  local tmp="${KUBECONFIG_FILE}.tmp"
  cat >"${tmp}" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: ${NAME}
  cluster:
    server: ${APISERVER_URL}
    certificate-authority-data: $(base64 -w0 <"${RUN_DIR}/pki/apiserver.crt")
users:
- name: ${NAME}
  user:
    token: $(token)
contexts:
- name: ${NAME}
  context:
    cluster: ${NAME}
    user: ${NAME}
    namespace: default
current-context: ${NAME}
KUBECONFIG
  chmod 600 "${tmp}"
  mv -f "${tmp}" "${KUBECONFIG_FILE}"
}

start_etcd() {
  launch etcd \
    --name="${NAME}" \
    --data-dir="${RUN_DIR}/etcd" \
    --listen-client-urls="${ETCD_URL}" \
    --advertise-client-urls="${ETCD_URL}" \
    --listen-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-advertise-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-cluster="${NAME}=http://127.0.0.1:${ETCD_PEER_PORT}" \
    --unsafe-no-fsync=true \
    --log-level=warn
  wait_ready etcd etcd_healthy
}

# The API server listens and advertises on loopback only. Endpoints reject
# loopback addresses, hence no endpoint reconciler (it would log an error
# every 10 s); nothing here reaches the API server through its Service.
start_apiserver() {
  local pki="${RUN_DIR}/pki"
  launch kube-apiserver \
    --etcd-servers="${ETCD_URL}" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --secure-port="${APISERVER_PORT}" \
    --tls-cert-file="${pki}/apiserver.crt" \
    --tls-private-key-file="${pki}/apiserver.key" \
    --client-ca-file="${pki}/apiserver.crt" \
    --token-auth-file="${pki}/token.csv" \
    --authorization-mode=RBAC \
    --service-account-issuer="https://kubernetes.default.svc.cluster.local" \
    --service-account-key-file="${pki}/sa.pub" \
    --service-account-signing-key-file="${pki}/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 \
    --endpoint-reconciler-type=none \
    --feature-gates="${FEATURE_GATES}" \
    --runtime-config="${RUNTIME_CONFIG}" \
    --v=1
  wait_ready kube-apiserver apiserver_ready
}

# The controller-manager and scheduler get no authentication/authorization
# kubeconfig: only their /healthz is used, which is always allowed, and
# delegated authentication would need a request-header CA nobody uses here.
#
# --node-monitor-grace-period: on a loaded machine kwok's node lease can lag
# past the default 50 s. The node lifecycle controller then marks every pod
# of the node not Ready, and kwok (whose stages only make Pending pods
# Ready) never makes them Ready again: the Deployments, StatefulSets and
# DaemonSets the real controllers run would never be available again.
start_controller_manager() {
  launch kube-controller-manager \
    --kubeconfig="${KUBECONFIG_FILE}" \
    --bind-address=127.0.0.1 \
    --secure-port="${CONTROLLER_MANAGER_PORT}" \
    --controllers='*' \
    --leader-elect=false \
    --node-monitor-grace-period=10m \
    --service-account-private-key-file="${RUN_DIR}/pki/sa.key" \
    --root-ca-file="${RUN_DIR}/pki/apiserver.crt" \
    --use-service-account-credentials=false \
    --feature-gates="${FEATURE_GATES}" \
    --v=1
  wait_ready kube-controller-manager https_healthy "${CONTROLLER_MANAGER_PORT}"
}

start_scheduler() {
  launch kube-scheduler \
    --kubeconfig="${KUBECONFIG_FILE}" \
    --bind-address=127.0.0.1 \
    --secure-port="${SCHEDULER_PORT}" \
    --leader-elect=false \
    --feature-gates="${FEATURE_GATES}" \
    --v=1
  wait_ready kube-scheduler https_healthy "${SCHEDULER_PORT}"
}

start_kwok() {
  launch kwok \
    --kubeconfig="${KUBECONFIG_FILE}" \
    --config="${KWOK_STAGES}" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-ip=127.0.0.1 \
    --server-address="127.0.0.1:${KWOK_PORT}"
  wait_ready kwok http_healthy "${KWOK_PORT}"
}

# node_json is a fake node as kwok documents it: the annotation kwok manages by,
# the type=kwok label, generous capacity (GPUs included, for gang/GPU
# workloads). No kwok taint: every node here is fake, and pods created by
# controllers (Jobs, StatefulSets) must schedule without tolerations.
node_json() {
  local name=$1
  cat <<JSON
{
  "apiVersion": "v1",
  "kind": "Node",
  "metadata": {
    "name": "${name}",
    "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
    "labels": {
      "type": "kwok",
      "kubernetes.io/hostname": "${name}",
      "kubernetes.io/os": "linux",
      "kubernetes.io/arch": "amd64",
      "node-role.kubernetes.io/agent": ""
    }
  },
  "status": {
    "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"},
    "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"},
    "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "fake", "kubeProxyVersion": "fake"}
  }
}
JSON
}

create_nodes() {
  local i name
  for ((i = 0; i < NODES; i++)); do
    name="kwok-node-${i}"
    node_json "${name}" | api_curl -X POST -H 'Content-Type: application/json' \
      --data-binary @- "${APISERVER_URL}/api/v1/nodes" >/dev/null ||
      fail_start kwok "could not create node ${name}"
  done
  for ((i = 0; i < NODES; i++)); do
    wait_ready kwok node_ready "kwok-node-${i}"
  done
}

any_running() {
  local c
  for c in "${COMPONENTS[@]}"; do
    running_pid "${c}" >/dev/null && return 0
  done
  return 1
}

cmd_start() {
  require_tools curl openssl setsid base64
  [[ "${NODES}" =~ ^[0-9]+$ ]] || die "KARTA_TESTENV_NODES must be a number, got ${NODES}"
  cmd_build
  if any_running; then
    if [[ -f "${KUBECONFIG_FILE}" ]] && apiserver_ready; then
      log "already running (${RUN_DIR}); reusing it"
      return 0
    fi
    die "a previous environment in ${RUN_DIR} is partly running; run: $0 stop"
  fi
  local port
  for port in "${ETCD_PORT}" "${ETCD_PEER_PORT}" "${APISERVER_PORT}" "${CONTROLLER_MANAGER_PORT}" "${SCHEDULER_PORT}" "${KWOK_PORT}"; do
    port_in_use "${port}" && die "port ${port} on 127.0.0.1 is in use; pick others with KARTA_TESTENV_*_PORT (see $0 header)"
  done
  # Runtime state is recreated each time; never wipe a directory that is not
  # one of ours (a mistyped KARTA_TESTENV_DIR).
  if [[ -d "${RUN_DIR}" && -n "$(ls -A "${RUN_DIR}")" && ! -f "${RUN_DIR}/pki/token.csv" ]]; then
    die "${RUN_DIR} is not empty and not a testenv directory; set KARTA_TESTENV_DIR to another path"
  fi
  rm -rf "${RUN_DIR}"
  mkdir -p "${RUN_DIR}"
  chmod 700 "${RUN_DIR}"
  write_pki
  write_kubeconfig

  local start=${SECONDS}
  start_etcd
  start_apiserver
  if ((NODES > 0)); then
    start_controller_manager
    start_scheduler
    start_kwok
    create_nodes
  fi
  log "ready in $((SECONDS - start))s: API server ${APISERVER_URL}, ${NODES} fake node(s); eval \"\$($0 env)\""
}

cmd_stop() {
  local i c pid deadline
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
    c=${COMPONENTS[i]}
    if pid=$(running_pid "${c}"); then
      kill -TERM "${pid}" 2>/dev/null || true
      deadline=$((SECONDS + 30))
      while kill -0 "${pid}" 2>/dev/null; do
        if ((SECONDS >= deadline)); then
          log "${c} (pid ${pid}) ignored SIGTERM for 30s; killing it"
          kill -KILL "${pid}" 2>/dev/null || true
        fi
        sleep 0.2
      done
    fi
    rm -f "$(pid_file "${c}")"
  done
}

# ---------------------------------------------------------- fault injection

# component_known checks a component name against COMPONENTS.
component_known() {
  local c
  for c in "${COMPONENTS[@]}"; do [[ "$1" == "${c}" ]] && return 0; done
  die "unknown component $1 (one of: ${COMPONENTS[*]})"
}

# cmd_kill SIGKILLs one component (a crash: no graceful shutdown) and waits
# until it is gone. Its pid file stays, so status shows it exited.
cmd_kill() {
  local component=$1 pid
  component_known "${component}"
  pid=$(running_pid "${component}") || die "${component} is not running"
  kill -KILL "${pid}"
  # Gone, or a zombie nobody has reaped yet (in a container without an
  # init, possibly never): either way it holds no port any more.
  local stat
  while stat=$(<"/proc/${pid}/stat") 2>/dev/null && [[ "${stat##*) }" != Z* ]]; do sleep 0.05; done
  log "killed ${component} (pid ${pid})"
}

# cmd_relaunch starts one killed component again with the arguments start
# gave it, on the same state (etcd's data, the PKI), and waits until it is
# ready.
cmd_relaunch() {
  local component=$1
  component_known "${component}"
  running_pid "${component}" >/dev/null && die "${component} is running; kill it first"
  [[ -f "${RUN_DIR}/pki/token.csv" ]] || die "no environment in ${RUN_DIR}; run: $0 start"
  # The log of the run before is kept beside the new one.
  [[ -f "$(log_file "${component}")" ]] && mv -f "$(log_file "${component}")" "$(log_file "${component}").previous"
  case "${component}" in
    etcd) start_etcd ;;
    kube-apiserver) start_apiserver ;;
    kube-controller-manager) start_controller_manager ;;
    kube-scheduler) start_scheduler ;;
    kwok) start_kwok ;;
  esac
  log "relaunched ${component}"
}

# cmd_signal pauses (SIGSTOP) or resumes (SIGCONT) one component: a hung
# process that keeps its connections open.
cmd_signal() {
  local signal=$1 component=$2 pid
  component_known "${component}"
  pid=$(running_pid "${component}") || die "${component} is not running"
  kill "-${signal}" "${pid}"
}

cmd_env() {
  [[ -f "${KUBECONFIG_FILE}" ]] || die "no environment in ${RUN_DIR}; run: $0 start"
  echo "export KARTA_TESTENV_KUBECONFIG=${KUBECONFIG_FILE}"
  echo "export KUBECONFIG=${KUBECONFIG_FILE}"
}

# cmd_status exits 1 when the API server is not ready or a started component
# has died; components never started (KARTA_TESTENV_NODES=0) or stopped are
# "not running".
cmd_status() {
  local c pid bad=0
  for c in "${COMPONENTS[@]}"; do
    if pid=$(running_pid "${c}"); then
      printf '%-24s running (pid %s)\n' "${c}" "${pid}"
    elif [[ -f "$(pid_file "${c}")" ]]; then
      printf '%-24s exited (see %s)\n' "${c}" "$(log_file "${c}")"
      bad=1
    else
      printf '%-24s not running\n' "${c}"
    fi
  done
  if running_pid kube-apiserver >/dev/null && apiserver_ready; then
    echo "API server ${APISERVER_URL} ready; kubeconfig ${KUBECONFIG_FILE}"
  else
    echo "API server not ready"
    bad=1
  fi
  return "${bad}"
}

usage() {
  cat >&2 <<USAGE
usage: $0 build|start|stop|env|status
       $0 kill|relaunch|pause|resume COMPONENT
  build   build the binaries into ${CACHE_DIR} (skipped when cached)
  start   build if needed, then start etcd, kube-apiserver and (unless
          KARTA_TESTENV_NODES=0) controller-manager, scheduler, kwok + nodes
  stop    stop everything started (idempotent)
  env     print export lines: eval "\$($0 env)"
  status  show what runs; exit 1 unless the API server is ready and
          every component started still runs
  kill COMPONENT      SIGKILL one component and wait until it is gone
  relaunch COMPONENT  start a killed component again (same flags and
                      state) and wait until it is ready
  pause COMPONENT     SIGSTOP one component; resume COMPONENT: SIGCONT
  COMPONENT is one of: ${COMPONENTS[*]}
USAGE
}

main() {
  case "${1:-}" in
    kill | relaunch | pause | resume)
      if (($# != 2)); then
        usage
        exit 2
      fi
      case "$1" in
        kill) cmd_kill "$2" ;;
        relaunch) cmd_relaunch "$2" ;;
        pause) cmd_signal STOP "$2" ;;
        resume) cmd_signal CONT "$2" ;;
      esac
      return
      ;;
  esac
  if (($# != 1)); then
    usage
    exit 2
  fi
  case "$1" in
    build) cmd_build ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    env) cmd_env ;;
    status) cmd_status ;;
    -h | --help | help) usage ;;
    *)
      usage
      exit 2
      ;;
  esac
}

main "$@"
