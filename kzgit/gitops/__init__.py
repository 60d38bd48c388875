"""What the cluster receives: Argo CD Applications and Flux Kustomizations, rendered offline.

- :mod:`~kzgit.gitops.urls`: which URLs are "this repository";
- :mod:`~kzgit.gitops.catalog`: what a scan of the repository finds, and the applications' catalog;
- :mod:`~kzgit.gitops.discover`: the applications of a repository, as delivered;
- :mod:`~kzgit.gitops.select`: which applications a change reaches;
- :mod:`~kzgit.gitops.flux`, :mod:`~kzgit.gitops.envsubst`, :mod:`~kzgit.gitops.sourceignore`:
  a Flux Kustomization as the kustomize-controller renders it;
- :mod:`~kzgit.gitops.argocd`: an Argo CD Application as its repo-server renders it;
- :mod:`~kzgit.gitops.appset`: ApplicationSets (list and git-directories generators);
- :mod:`~kzgit.gitops.render`: one entry, :func:`~kzgit.gitops.render.render_app`;
- :mod:`~kzgit.gitops.model`: :class:`~kzgit.gitops.model.App` and its repository.

Below the CLI, beside the hooks and ``kzgit diff``: it uses the builder, never prints.
"""
