// Public API of `svc`: the helpers a project's components use. Filled in by the framework-core work.
export {};
