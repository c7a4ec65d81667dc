{{/* Labels every object carries. */}}
{{- define "aibom.labels" -}}
app.kubernetes.io/name: aibom-controller
app.kubernetes.io/part-of: aibom
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The pods' selector: one controller per cluster, so the name alone. */}}
{{- define "aibom.selectorLabels" -}}
app.kubernetes.io/name: aibom-controller
{{- end }}

{{/* The image: by digest when one is given (immutable), else by tag. */}}
{{- define "aibom.image" -}}
{{- if .Values.image.digest -}}
{{- if not (hasPrefix "sha256:" .Values.image.digest) -}}
{{- fail "image.digest must be sha256:<64 hex digits>" -}}
{{- end -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* Whether the in-tree adapter named by the argument is enabled. */}}
{{- define "aibom.adapterEnabled" -}}
{{- $root := index . 0 -}}{{- $name := index . 1 -}}
{{- if or (has "all" $root.Values.adapters) (has $name $root.Values.adapters) }}true{{ end -}}
{{- end }}
