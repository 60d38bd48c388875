"""Names kustomize gives meaning to, one home each (kustomize api/konfig/general.go and the kyaml
files cited per name, tag api/v0.18.0)."""
from __future__ import annotations

# api/konfig/general.go IgnoredByKustomizeAnnotation: a resource kept out of the output
LOCAL_CONFIG_ANNOTATION = "config.kubernetes.io/local-config"
# api/konfig/general.go ValidatedByLabelKey: the one change a validator may make
VALIDATED_BY_LABEL = "validated-by"
# api/types/helmchartargs.go HelmDefaultHome
HELM_DEFAULT_HOME = "charts"
# api/konfig/plugins.go: the plugin home's environment variable, the builtins' version
PLUGIN_HOME_ENV = "KUSTOMIZE_PLUGIN_HOME"
BUILTIN_API_VERSION = "builtin"
# kyaml/fn/runtime/runtimeutil/functiontypes.go FunctionAnnotationKey, OldFunctionAnnotationKey
FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")
FUNCTION_ANNOTATION = FUNCTION_ANNOTATIONS[0]
# kyaml/fn/runtime/runtimeutil/functiontypes.go: the oldest way to name a container function
CONTAINER_ANNOTATION = "config.kubernetes.io/container"
# api/internal/plugins/utils/utils.go: what a plugin's output says about generated resources
ID_ANNOTATION = "kustomize.config.k8s.io/id"
HASH_ANNOTATION = "kustomize.config.k8s.io/needs-hash"
BEHAVIOR_ANNOTATION = "kustomize.config.k8s.io/behavior"
# api/konfig/general.go ManagedbyLabelKey; its value depends on the release
# (kzgit.versions.managed_by)
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
