/* The commands of the glcv tool, one file each (cmd_<name>.c): the function that runs it (argv:
 * the arguments after the command's name; returns an exit status or CLI_HELP) and its help
 * text. main.c maps the names to them. */
#ifndef GLCV_TOOLS_COMMANDS_H
#define GLCV_TOOLS_COMMANDS_H

int cmd_segment(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_eval_otb(int argc, char **argv); /* glcv eval otb (cmd_track.c) */
int cmd_info(int argc, char **argv);
int cmd_track(int argc, char **argv);
int cmd_match(int argc, char **argv);
int cmd_correlate(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_serve(int argc, char **argv); /* built with the service's libraries only */

extern const char cmd_segment_help[];
extern const char cmd_synth_help[];
extern const char cmd_compare_help[];
extern const char cmd_eval_help[];
extern const char cmd_eval_otb_help[];
extern const char cmd_info_help[];
extern const char cmd_track_help[];
extern const char cmd_match_help[];
extern const char cmd_correlate_help[];
extern const char cmd_stream_help[];
extern const char cmd_serve_help[];

#endif
