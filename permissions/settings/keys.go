package settings

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agent-mcp/agent-mcp/internal/textdist"
)

// claudeCodeKeys are the top-level keys of Claude Code's settings files
// (its settings schema, 2.1.332). agent-mcp reads a few of them and shares
// the files, so the others are not mistakes.
var claudeCodeKeys = []string{
	"$schema", "apiKeyHelper", "proxyAuthHelper", "awsCredentialExport", "awsAuthRefresh", "gcpAuthRefresh",
	"processWrapper", "policyHelper", "policyHelpers", "fileSuggestion", "respectGitignore", "breakReminder",
	"quietHours", "cleanupPeriodDays", "desktopSessionCleanupPeriodDays", "syncClaudeAiSkills",
	"syncClaudeAiPlugins", "skillListingMaxDescChars", "skillListingBudgetFraction",
	"wslInheritsWindowsSettings", "env", "attribution", "attributionProject", "attributionProjectPolicy",
	"includeCoAuthoredBy", "includeGitInstructions", "permissions", "additionalDirectoryConfigRoots", "model",
	"fallbackModel", "availableModels", "enforceAvailableModels", "availableModelsMatch", "deniedModels",
	"modelOverrides", "modelPicker", "modelPricing", "modelCatalogUrl", "modelCatalogPublicKey",
	"enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
	"disableClaudeAiConnectors", "skillOverrides", "disableBundledSkills", "managedMcpServers",
	"allowedMcpServers", "deniedMcpServers", "hooks", "worktree", "disableAllHooks", "disableReplyCheck",
	"disableAgentView", "disableRemoteControl", "disableWorkflows", "disableArtifact", "enableArtifact",
	"enableWorkflows", "workflowSizeGuideline", "workflowKeywordTriggerEnabled", "disableSkillShellExecution",
	"disableWindowsBashCommandSplit", "defaultShell", "bashEditDiffEnabled", "bashOutputMaxChars",
	"taskOutputMaxChars", "respondToBashCommands", "allowManagedHooksOnly", "allowedHttpHookUrls",
	"httpHookAllowedEnvVars", "allowManagedPermissionRulesOnly", "allowManagedMcpServersOnly",
	"desktopMcpServersListScope", "allowAllClaudeAiMcps", "allowClaudeInChromeWithManagedMcp",
	"strictPluginOnlyCustomization", "statusLine", "prUrlTemplate", "footerLinksRegexes", "subagentStatusLine",
	"enabledPlugins", "prependPlugins", "appendPlugins", "extraKnownMarketplaces", "additionalMarketplaces",
	"strictKnownMarketplaces", "allowedMarketplaces", "blockedMarketplaces", "disableCommandPluginSources",
	"disableSideloadFlags", "pluginSuggestionMarketplaces", "forceLoginMethod", "forceLoginGatewayUrl",
	"gatewayInternalNetworks", "parentSettingsBehavior", "managedSourcesBehavior", "forceLoginOrgUUID",
	"allowNestedModelAccessUnderForceLogin", "allowedProviders", "forceRemoteSettingsRefresh",
	"otelHeadersHelper", "outputStyle", "viewMode", "language", "skipWebFetchPreflight", "sandbox",
	"feedbackSurveyRate", "feedbackDrafts", "spinnerTipsEnabled", "clawdFileProgressEnabled", "spinnerVerbs",
	"spinnerTipsOverride", "syntaxHighlightingDisabled", "maxProseWidth", "spellcheck",
	"terminalTitleFromRename", "promptCacheTtl", "subagentPromptCacheTtl", "alwaysThinkingEnabled",
	"effortLevel", "maxEffortLevel", "modelSettings", "ultracode", "autoCompactWindow", "advisorModel",
	"fastMode", "fastModePerSessionOptIn", "promptSuggestionEnabled", "emojiCompletionEnabled",
	"awaySummaryEnabled", "responseComparisonEnabled", "showClearContextOnPlanAccept", "askUserQuestionTimeout",
	"dialogExpiry", "agent", "modelProposedGoals", "companyAnnouncements", "pluginConfigs", "remote",
	"autoUpdatesChannel", "minimumVersion", "requiredMinimumVersion", "requiredMaximumVersion",
	"downloadsMirrorUrl", "plansDirectory", "tui", "voice", "channelsEnabled", "allowedChannelPlugins",
	"prefersReducedMotion", "timeFormat", "timeZone", "doneMeansMerged", "totalTokensReminder",
	"totalTokensReminderBudget", "totalTokensReminderAfterUserTurn", "autoMemoryEnabled", "autoMemoryDirectory",
	"autoDreamEnabled", "showThinkingSummaries", "skipDangerousModePermissionPrompt",
	"skipWorkflowUsageWarning", "disableAutoMode", "remoteTools", "sshConfigs", "sshHostCommands", "claudeMd",
	"claudeMdExcludes", "pluginTrustMessage", "theme", "editorMode", "keybindingFlavor", "vimInsertModeRemaps",
	"verbose", "preferredNotifChannel", "autoCompactEnabled", "precomputeCompactionEnabled",
	"precomputeArmTokens", "autoCompactRaisedForLoad", "autoCompactOfferAnswer", "idleCompaction",
	"switchModelsOnFlag", "autoContinueAtUsageLimit", "autoScrollEnabled", "wheelScrollAccelerationEnabled",
	"fileCheckpointingEnabled", "showTurnDuration", "showMessageTimestamps", "terminalProgressBarEnabled",
	"todoFeatureEnabled", "teammateMode", "remoteControlAtStartup", "remoteControl", "isolatePeerMachines",
	"daemonColdStart", "crossSessionInbound", "remoteMessageReceipts", "autoUploadSessions",
	"inputNeededNotifEnabled", "agentPushNotifEnabled",
}

// agentMCPKeys are the top-level keys agent-mcp reads that Claude Code
// does not know.
var agentMCPKeys = []string{"lspServers", "lspDiagnosticsWaitMs", "redact"}

// permissionKeys are the keys of the permissions object Claude Code knows
// (agent-mcp reads allow, ask, deny, defaultMode and additionalDirectories).
var permissionKeys = []string{
	"allow", "deny", "ask", "defaultMode", "disableBypassPermissionsMode", "blockReadsOutsideWorkingDirectories",
	"blockFileToolReadsOutsideWorkingDirectories", "blockWritesOutsideWorkingDirectories", "blockReadsExemptPaths",
	"workingDirectoriesAsGiven", "workingDirectoriesExclude", "disableAutoMode", "denyInsteadOfPrompting",
	"additionalDirectories",
}

// UnknownKeys names the keys of one settings source (a file's content)
// that neither agent-mcp nor Claude Code knows, top level and inside
// "permissions", each as a sentence naming the source and the closest
// known key: a misspelt key is otherwise ignored without a word, and the
// rules under it do nothing. data that is not a JSON object gives none
// (Load reports that).
func UnknownKeys(name string, data []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil
	}
	known := slices.Concat(claudeCodeKeys, agentMCPKeys)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if !slices.Contains(known, k) {
			out = append(out, unknownKey(name, k, known))
		}
	}
	var perms map[string]json.RawMessage
	if raw, ok := top["permissions"]; ok && json.Unmarshal(raw, &perms) == nil {
		for _, k := range slices.Sorted(maps.Keys(perms)) {
			if !slices.Contains(permissionKeys, k) {
				out = append(out, unknownKey(name, "permissions."+k, prefixed("permissions.", permissionKeys)))
			}
		}
	}
	return out
}

func unknownKey(name, key string, known []string) string {
	msg := fmt.Sprintf("settings %s: unknown key '%s', ignored", name, key)
	if c := Closest(key, known); c != "" {
		msg += fmt.Sprintf(" (did you mean '%s'?)", c)
	}
	return msg
}

func prefixed(p string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = p + k
	}
	return out
}

// Closest returns the candidate nearest to word by edit distance (letters
// compared without case), or "" when none is near enough to be a likely
// misspelling: at most a third of the word's length, and at least 2,
// edits away. The command line uses it for mistyped flags and commands too.
func Closest(word string, candidates []string) string {
	best, bestD := "", max(2, len(word)/3)+1
	for _, c := range candidates {
		if d := textdist.Distance(strings.ToLower(word), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
