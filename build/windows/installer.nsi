; The per-user Windows installer, built by `make dist` with Debian's makensis:
;   makensis -NOCD -DVERSION=<git describe> -DVIVERSION=<a.b.c.d> -DSTAGE=<dir with the .exe files>
;            -DOUTFILE=<installer path> build/windows/installer.nsi
; It installs into %LOCALAPPDATA%\Programs\Switchboard without elevation:
; the tray app (the daemon runs inside it), the window app, the command
; line, a Start-menu shortcut, optionally start at login (the same Run value
; the app's own "Start at login" setting writes), and an uninstaller that
; stops Switchboard first. Your data in %APPDATA%\Switchboard is kept.

; A 64-bit installer, like the programs it installs (and Wine's wine64, with
; which CI runs it, cannot run 32-bit ones).
Target amd64-unicode
!include "MUI2.nsh"
!include "LogicLib.nsh"

!ifndef VERSION
  !error "define VERSION (git describe)"
!endif
!ifndef VIVERSION
  !define VIVERSION "0.0.0.0"
!endif

!define APP "Switchboard"
!define RUNKEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define RUNVALUE "io.switchboard.tray"
!define UNINSTKEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Switchboard"

Name "${APP}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\Switchboard"
InstallDirRegKey HKCU "${UNINSTKEY}" "InstallLocation"
RequestExecutionLevel user
SetCompressor /SOLID lzma

VIProductVersion "${VIVERSION}"
VIAddVersionKey "ProductName" "${APP}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${APP} installer"
VIAddVersionKey "LegalCopyright" "Switchboard authors"

!define MUI_ICON "build/windows/icon.ico"
!define MUI_UNICON "build/windows/icon.ico"
!define MUI_FINISHPAGE_RUN "$INSTDIR\switchboard-tray.exe"
!define MUI_FINISHPAGE_RUN_TEXT "Start Switchboard (in the notification area)"
!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; Stops a running Switchboard so its files can be replaced or removed: the
; tray is asked to close first (it then stops every server), whatever is
; left is ended (the supervisor's Job Objects take the servers with it, so
; no /T: Wine's taskkill refuses it, and it has no tasklist, so under Wine
; the wait below ends at once).
!macro StopSwitchboard
  nsExec::Exec 'taskkill /IM switchboard-tray.exe'
  Pop $0
  StrCpy $1 0
  ${Do}
    nsExec::Exec 'cmd /c tasklist /FI "IMAGENAME eq switchboard-tray.exe" | find /I "switchboard-tray.exe"'
    Pop $0
    ${If} $0 != 0
      ${Break}
    ${EndIf}
    Sleep 250
    IntOp $1 $1 + 1
  ${LoopUntil} $1 >= 40
  nsExec::Exec 'taskkill /F /IM switchboard-tray.exe'
  Pop $0
  nsExec::Exec 'taskkill /F /IM switchboard-window.exe'
  Pop $0
  nsExec::Exec 'taskkill /F /IM switchboard.exe'
  Pop $0
!macroend

Section "Switchboard (required)" SecApp
  SectionIn RO
  !insertmacro StopSwitchboard
  SetOutPath "$INSTDIR"
  File "${STAGE}/switchboard.exe"
  File "${STAGE}/switchboard-tray.exe"
  File "${STAGE}/switchboard-window.exe"
  File "/oname=switchboard.ico" "build/windows/icon.ico"
  File "/oname=README.md" "README.md"
  WriteUninstaller "$INSTDIR\uninstall.exe"

  CreateDirectory "$SMPROGRAMS"
  CreateShortcut "$SMPROGRAMS\Switchboard.lnk" "$INSTDIR\switchboard-tray.exe" "" "$INSTDIR\switchboard.ico"

  WriteRegStr HKCU "${UNINSTKEY}" "DisplayName" "${APP}"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTKEY}" "Publisher" "Switchboard"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayIcon" "$INSTDIR\switchboard.ico"
  WriteRegStr HKCU "${UNINSTKEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTKEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTKEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoRepair" 1
SectionEnd

Section "Start Switchboard when I log in" SecLogin
  WriteRegStr HKCU "${RUNKEY}" "${RUNVALUE}" '"$INSTDIR\switchboard-tray.exe"'
SectionEnd

!insertmacro MUI_FUNCTION_DESCRIPTION_BEGIN
  !insertmacro MUI_DESCRIPTION_TEXT ${SecApp} "The tray app, the dashboard window and the switchboard command line."
  !insertmacro MUI_DESCRIPTION_TEXT ${SecLogin} "Start Switchboard in the notification area at login (can be changed later in its settings)."
!insertmacro MUI_FUNCTION_DESCRIPTION_END

Section "Uninstall"
  !insertmacro StopSwitchboard
  DeleteRegValue HKCU "${RUNKEY}" "${RUNVALUE}"
  Delete "$SMPROGRAMS\Switchboard.lnk"
  Delete "$INSTDIR\switchboard.exe"
  Delete "$INSTDIR\switchboard-tray.exe"
  Delete "$INSTDIR\switchboard-window.exe"
  Delete "$INSTDIR\switchboard.ico"
  Delete "$INSTDIR\README.md"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINSTKEY}"
SectionEnd
