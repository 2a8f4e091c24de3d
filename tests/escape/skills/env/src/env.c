/* env: the whole environment, one ENV line per entry. */
#include "attack.h"

extern char **environ;

int
main(void)
{
	char **e;

	for (e = environ; *e != NULL; e++)
		say("ENV %s", *e);
	say("DONE");
	return 0;
}
