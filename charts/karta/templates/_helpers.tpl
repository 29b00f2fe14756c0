{{/* The chart's name, overridable. */}}
{{- define "karta.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name: the release name, with the chart's unless it contains it already. */}}
{{- define "karta.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The labels of every object. */}}
{{- define "karta.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "karta.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The labels that select the controller's pods. */}}
{{- define "karta.selectorLabels" -}}
app.kubernetes.io/name: {{ include "karta.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The controller's ServiceAccount. */}}
{{- define "karta.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "karta.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: name an existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The name of the leader election Lease. */}}
{{- define "karta.leaseName" -}}
{{- include "karta.fullname" . }}
{{- end }}

{{/* The webhook Service and its in-cluster DNS name. */}}
{{- define "karta.webhookService" -}}
{{- printf "%s-webhook" (include "karta.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "karta.webhookHost" -}}
{{- printf "%s.%s.svc" (include "karta.webhookService" .) .Release.Namespace }}
{{- end }}

{{/* The Secret holding the webhook's certificate. */}}
{{- define "karta.webhookSecret" -}}
{{- if .Values.webhook.certManager.enabled }}
{{- printf "%s-webhook-tls" (include "karta.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- required "webhook.enabled needs a certificate: set webhook.tls.secretName to a kubernetes.io/tls Secret, or webhook.certManager.enabled" .Values.webhook.tls.secretName }}
{{- end }}
{{- end }}

{{/* The cert-manager Certificate's name. */}}
{{- define "karta.certificate" -}}
{{- printf "%s-webhook" (include "karta.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Where the webhook's certificate is mounted in the container. */}}
{{- define "karta.tlsDir" -}}
/etc/karta/tls
{{- end }}

{{/* Checks of value combinations that cannot work. */}}
{{- define "karta.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount > 1 needs leaderElection.enabled: without it every replica writes status" }}
{{- end }}
{{- if and .Values.karmada.webhookConfiguration (not .Values.webhook.enabled) }}
{{- fail "karmada.webhookConfiguration needs webhook.enabled: Karmada calls the controller's webhook" }}
{{- end }}
{{- if .Values.gangOutput.enabled }}
{{- if not (has .Values.gangOutput.target (list "workload-api" "kai" "volcano" "coscheduling")) }}
{{- fail (printf "gangOutput.target %q: want workload-api, kai, volcano or coscheduling" .Values.gangOutput.target) }}
{{- end }}
{{- if and .Values.gangOutput.podWebhook.enabled (not .Values.webhook.enabled) }}
{{- fail "gangOutput.podWebhook.enabled needs webhook.enabled: the pod webhook is served on the webhook's port (or set gangOutput.podWebhook.enabled=false)" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The gang output's target objects: their API group and resources. */}}
{{- define "karta.gangTarget" -}}
{{- $t := .Values.gangOutput.target -}}
{{- if and (eq $t "workload-api") .Values.gangOutput.compositePodGroup }}{apiGroups: [scheduling.k8s.io], resources: [compositepodgroups, podgroups, workloads]}
{{- else if eq $t "workload-api" }}{apiGroups: [scheduling.k8s.io], resources: [podgroups, workloads]}
{{- else if eq $t "kai" }}{apiGroups: [scheduling.run.ai], resources: [podgroups]}
{{- else if eq $t "volcano" }}{apiGroups: [scheduling.volcano.sh], resources: [podgroups]}
{{- else }}{apiGroups: [scheduling.x-k8s.io], resources: [podgroups]}
{{- end }}
{{- end }}

{{/*
The kinds the built-in Kartas' references read, by API group (test/helm checks it against the built-ins),
and the Trainer's runtimes, which a TrainJob names (examples/kartas/trainjob-runtime.yaml).
*/}}
{{- define "karta.referencedKinds" -}}
apps: [replicasets]
batch: [jobs]
trainer.kubeflow.org: [clustertrainingruntimes, trainingruntimes]
{{- end }}

{{/*
The workload kinds of the built-in Kartas and the kinds between them and their pods (their child kinds,
and ReplicaSets, Deployments, StatefulSets, Jobs), by API group: the gang output watches them (test/helm
keeps the list equal to what the built-ins name). Kubernetes' own kinds are owners only: the gang output
does not watch them as workloads (gangoutput.WatchedAsWorkload).
*/}}
{{- define "karta.gangWorkloads" -}}
agents.x-k8s.io: [sandboxes]
apps: [deployments, replicasets, statefulsets]
apps.nvidia.com: [nimcaches, nimservices]
argoproj.io: [workflows]
batch: [jobs]
batch.volcano.sh: [jobs]
flink.apache.org: [flinkdeployments]
grove.io: [podcliques, podcliquescalinggroups, podcliquesets]
jobset.x-k8s.io: [jobsets]
kubeflow.org: [jaxjobs, mpijobs, notebooks, paddlejobs, pytorchjobs, tfjobs, xgboostjobs]
leaderworkerset.x-k8s.io: [leaderworkersets]
milvus.io: [milvuses]
nvidia.com: [dynamocomponentdeployments, dynamographdeployments]
ray.io: [rayclusters, rayjobs, rayservices]
serving.knative.dev: [revisions, services]
serving.kserve.io: [inferenceservices, llminferenceservices]
sparkoperator.k8s.io: [sparkapplications]
trainer.kubeflow.org: [trainjobs]
workload.codeflare.dev: [appwrappers]
{{- end }}

{{/*
The kinds the metrics exporter watches besides pods (list and watch): every built-in's workload kind, the
child kinds they name and the owners between them and their pods (exporter.DefaultOwnerKinds), by API group.
test/helm's TestMetricsExporterRBAC holds it to the built-ins.
*/}}
{{- define "karta.exporterKinds" -}}
agents.x-k8s.io: [sandboxes]
apps: [daemonsets, deployments, replicasets, statefulsets]
apps.nvidia.com: [nimcaches, nimservices]
argoproj.io: [workflows]
batch: [cronjobs, jobs]
batch.volcano.sh: [jobs]
flink.apache.org: [flinkdeployments]
grove.io: [podcliques, podcliquescalinggroups, podcliquesets]
jobset.x-k8s.io: [jobsets]
kubeflow.org: [jaxjobs, mpijobs, notebooks, paddlejobs, pytorchjobs, tfjobs, xgboostjobs]
leaderworkerset.x-k8s.io: [leaderworkersets]
milvus.io: [milvuses]
nvidia.com: [dynamocomponentdeployments, dynamographdeployments]
ray.io: [rayclusters, rayjobs, rayservices]
serving.knative.dev: [revisions, services]
serving.kserve.io: [inferenceservices, llminferenceservices]
sparkoperator.k8s.io: [sparkapplications]
trainer.kubeflow.org: [trainjobs]
workload.codeflare.dev: [appwrappers]
{{- end }}
