package normalize

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestGeminiTools checks that Gemini CLI's built-in tools normalize like
// their Claude Code counterparts: the shell tool into command heads, the
// file writers into file edits with their path, and the readers, planners
// and note keepers into observations.
func TestGeminiTools(t *testing.T) {
	for _, tc := range []struct {
		tool string
		args map[string]any
		kind trace.Kind
		name string
	}{
		{"run_shell_command", map[string]any{"command": "git push origin main", "description": "Push"}, trace.KindToolCall, "git push"},
		{"run_shell_command", map[string]any{"command": "git status"}, trace.KindObservation, "git status"},
		{"write_file", map[string]any{"file_path": "VERSION", "content": "1.0.0\n"}, trace.KindFileMutation, FileWrite},
		{"replace", map[string]any{"file_path": "main.go", "old_string": "a", "new_string": "b"}, trace.KindFileMutation, FileEdit},
		{"hashline_edit", map[string]any{"file_path": "main.go"}, trace.KindFileMutation, FileChange},
	} {
		acts := Default().Actions(Call{ID: "c", Tool: tc.tool, Args: tc.args})
		if len(acts) != 1 || acts[0].Kind != tc.kind || acts[0].Name != tc.name {
			t.Errorf("Actions(%s %v) = %+v, want one %s %s", tc.tool, tc.args, acts, tc.kind, tc.name)
		}
	}
	for _, tool := range []string{"read_file", "read_many_files", "list_directory", "glob", "search_file_content", "grep_search",
		"google_web_search", "web_fetch", "save_memory", "write_todos", "get_internal_docs", "activate_skill", "cli_help",
		"codebase_investigator", "enter_plan_mode", "exit_plan_mode", "update_topic", "tracker_create_task",
		"tracker_update_task", "tracker_get_task", "tracker_list_tasks", "tracker_add_dependency", "tracker_visualize"} {
		acts := Default().Actions(Call{ID: "c", Tool: tool, Args: map[string]any{}})
		if len(acts) != 1 || acts[0].Kind != trace.KindObservation {
			t.Errorf("Actions(%s) = %+v, want one observation", tool, acts)
		}
	}
}
