lock is not a catalogue
{{{
