/** Folders whose changes are the build's own output, installed packages or state: never a reason to rebuild. */
const IGNORED_DIRS = /^(dist|node_modules|\.svc|\.git)(\/|$)/;

/**
 * Files editors write beside the one being edited: vim's swap files (`.x.ts.swp`, `.swo`, `.swx`) and its
 * write-test file `4913`, backups ending in `~`, Emacs lock and autosave files (`.#x.ts`, `#x.ts#`), and the
 * temporary files JetBrains and VS Code save through (`x.ts___jb_tmp___`, `x.ts.tmp`).
 */
const EDITOR_TEMP_FILE = /(^\.#|^#.*#$|~$|\.sw[a-p]$|\.swx$|^4913$|___jb_(tmp|old)___$|\.tmp$)/;

/** Whether a change to this project-relative path (either separator) should trigger a rebuild. */
export function isSourceChange(path: string): boolean {
  const normalized = path.replaceAll("\\", "/");
  const name = normalized.slice(normalized.lastIndexOf("/") + 1);
  return normalized !== "" && !IGNORED_DIRS.test(normalized) && !EDITOR_TEMP_FILE.test(name);
}
