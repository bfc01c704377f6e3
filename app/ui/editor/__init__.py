"""The program editor: its code box, syntax colours and the details dialog."""
