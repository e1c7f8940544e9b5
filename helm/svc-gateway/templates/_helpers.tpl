{{- define "svc-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "svc-gateway.fullname" -}}
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

{{- define "svc-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "svc-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: svc-gateway
{{- end }}

{{/* Selector labels of one component: gateway, operator or redis. */}}
{{- define "svc-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "svc-gateway.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "svc-gateway.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) }}
{{- end }}

{{- define "svc-gateway.gatewayServiceAccount" -}}
{{- if .Values.gateway.serviceAccount.create }}{{ default (include "svc-gateway.fullname" .) .Values.gateway.serviceAccount.name }}{{ else }}{{ default "default" .Values.gateway.serviceAccount.name }}{{ end }}
{{- end }}

{{- define "svc-gateway.operatorServiceAccount" -}}
{{- if .Values.operator.serviceAccount.create }}{{ default (printf "%s-operator" (include "svc-gateway.fullname" .)) .Values.operator.serviceAccount.name }}{{ else }}{{ default "default" .Values.operator.serviceAccount.name }}{{ end }}
{{- end }}

{{- define "svc-gateway.configMapName" -}}
{{- printf "%s-config" (include "svc-gateway.fullname" .) }}
{{- end }}

{{- define "svc-gateway.watchNamespace" -}}
{{- default .Release.Namespace .Values.operator.watchNamespace }}
{{- end }}

{{/* The Secret holding REDIS_URL, when there is one. */}}
{{- define "svc-gateway.redisSecretName" -}}
{{- if .Values.redis.existingSecret }}{{ .Values.redis.existingSecret }}{{ else }}{{ printf "%s-redis-url" (include "svc-gateway.fullname" .) }}{{ end }}
{{- end }}

{{- /* The bundled Redis with a password: the gateway's REDIS_URL is composed in the pod from that password. */ -}}
{{- define "svc-gateway.bundledRedisAuth" -}}
{{- if and .Values.redis.bundled.enabled .Values.redis.bundled.auth.enabled (not .Values.redis.url) (not .Values.redis.existingSecret) }}true{{ end }}
{{- end }}

{{- define "svc-gateway.redisEnabled" -}}
{{- if or .Values.redis.url .Values.redis.existingSecret .Values.redis.bundled.enabled }}true{{ end }}
{{- end }}

{{- define "svc-gateway.restrictedContainer" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
{{- end }}

{{- define "svc-gateway.restrictedPod" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- /* The URL clients use: gateway.publicUrl, else the Ingress host (https with a TLS Secret); empty without both. */}}
{{- define "svc-gateway.publicUrl" -}}
{{- if .Values.gateway.publicUrl }}{{ .Values.gateway.publicUrl }}
{{- else if and .Values.gateway.ingress.enabled .Values.gateway.ingress.host }}{{ ternary "https" "http" (ne .Values.gateway.ingress.tls.secretName "") }}://{{ .Values.gateway.ingress.host }}
{{- end }}
{{- end }}

{{/* The control-plane URL a gateway calls: the value, else this release's operator control-plane Service. */}}
{{- define "svc-gateway.controlPlaneUrl" -}}
{{- if .Values.gateway.controlPlane.url -}}
{{- .Values.gateway.controlPlane.url -}}
{{- else if and .Values.operator.enabled .Values.operator.controlPlane.enabled -}}
http://{{ include "svc-gateway.fullname" . }}-control-plane.{{ .Release.Namespace }}.svc:{{ .Values.operator.controlPlane.port }}
{{- else -}}
{{- fail "gateway.controlPlane.mode needs gateway.controlPlane.url, or operator.controlPlane.enabled to use this release's control plane" -}}
{{- end -}}
{{- end }}
